"""A tiny, honest "browser" for the end-to-end tests.

It does what a person's browser does with a server-rendered page and nothing more:

* parses the page's ``<form>`` elements with :mod:`html.parser`;
* lets the test act like a person: type into a text-like control, tick or
  untick a checkbox / radio, pick options in a ``<select>``, and click one
  submit button;
* builds the form data set exactly like a browser (document order, disabled
  controls and unnamed controls skipped, only checked checkboxes/radios, only
  selected options, hidden inputs as they are, textarea text, and only the
  clicked submit button's ``name=value``; repeated names are kept);
* submits it with the form's method and action as
  ``application/x-www-form-urlencoded``;
* follows a redirect only when asked to.

Hidden inputs cannot be edited (a person can't either), so a test can never
"forge" a csrf token or payload by accident.
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Iterable

import httpx

TEXT_LIKE = {
    "text",
    "search",
    "email",
    "url",
    "tel",
    "password",
    "number",
    "range",
    "date",
    "datetime-local",
    "month",
    "week",
    "time",
    "color",
}
# Controls that never contribute to the data set by themselves.
NEVER_SUBMITTED = {"reset", "button", "file", "image"}


@dataclass
class Option:
    value: str
    text: str = ""
    selected: bool = False
    disabled: bool = False


@dataclass
class Control:
    """One form-associated element, in document order."""

    tag: str  # input | select | textarea | button
    type: str  # input type; "select-one"/"select-multiple"; "textarea"; button type
    name: str | None
    value: str = ""
    checked: bool = False
    disabled: bool = False
    readonly: bool = False
    options: list[Option] = field(default_factory=list)
    attrs: dict[str, str] = field(default_factory=dict)

    @property
    def is_submit_button(self) -> bool:
        return (self.tag == "button" and self.type == "submit") or (
            self.tag == "input" and self.type == "submit"
        )


class FormError(LookupError):
    """The test asked for something a person could not do on this form."""


@dataclass
class Form:
    method: str
    action: str  # absolute URL
    enctype: str
    attrs: dict[str, str]
    controls: list[Control] = field(default_factory=list)

    # ---- inspection -------------------------------------------------------
    def named(self, name: str) -> list[Control]:
        return [c for c in self.controls if c.name == name]

    def names(self) -> list[str]:
        seen: list[str] = []
        for c in self.controls:
            if c.name and c.name not in seen:
                seen.append(c.name)
        return seen

    def hidden(self, name: str) -> str:
        """Value of the (single) hidden input called ``name``."""
        found = [c for c in self.named(name) if c.tag == "input" and c.type == "hidden"]
        if len(found) != 1:
            raise FormError(f"expected exactly one hidden input {name!r}, found {len(found)}")
        return found[0].value

    def buttons(self) -> list[tuple[str | None, str]]:
        return [(c.name, c.value) for c in self.controls if c.is_submit_button and not c.disabled]

    def has_button(self, name: str, value: str) -> bool:
        return (name, value) in self.buttons()

    def _editable(self, name: str, index: int | None) -> Control:
        found = [
            c
            for c in self.named(name)
            if (c.tag == "input" and c.type in TEXT_LIKE) or c.tag == "textarea"
        ]
        if not found:
            raise FormError(f"no text-like control named {name!r}; form has {self.names()}")
        if index is None:
            if len(found) > 1:
                raise FormError(f"{len(found)} controls named {name!r}; pass index=")
            index = 0
        ctl = found[index]
        if ctl.disabled or ctl.readonly:
            raise FormError(f"control {name!r} is disabled or read-only")
        return ctl

    # ---- what a person can do ----------------------------------------------
    def set(self, name: str, value: str, index: int | None = None) -> "Form":
        """Type ``value`` into a text-like input or textarea (replacing its text)."""
        self._editable(name, index).value = value
        return self

    def _toggles(self, name: str, value: str | None) -> list[Control]:
        found = [
            c
            for c in self.named(name)
            if c.tag == "input" and c.type in ("checkbox", "radio") and (value is None or c.value == value)
        ]
        if not found:
            raise FormError(f"no checkbox/radio named {name!r} with value {value!r}; form has {self.names()}")
        if len(found) > 1 and value is None:
            raise FormError(f"{len(found)} checkboxes/radios named {name!r}; pass a value")
        for c in found:
            if c.disabled:
                raise FormError(f"checkbox/radio {name!r}={c.value!r} is disabled")
        return found

    def check(self, name: str, value: str | None = None) -> "Form":
        for c in self._toggles(name, value):
            if c.type == "radio":
                for other in self.named(name):
                    if other.tag == "input" and other.type == "radio":
                        other.checked = False
            c.checked = True
        return self

    def uncheck(self, name: str, value: str | None = None) -> "Form":
        for c in self._toggles(name, value):
            if c.type == "radio":
                raise FormError("a person cannot uncheck a radio button")
            c.checked = False
        return self

    def select(self, name: str, *values: str) -> "Form":
        """Make exactly ``values`` the selected options of the ``<select name=name>``."""
        found = [c for c in self.named(name) if c.tag == "select"]
        if len(found) != 1:
            raise FormError(f"expected one <select name={name!r}>, found {len(found)}; form has {self.names()}")
        sel = found[0]
        if sel.disabled:
            raise FormError(f"<select name={name!r}> is disabled")
        if sel.type == "select-one" and len(values) != 1:
            raise FormError(f"<select name={name!r}> is single-choice; pick exactly one option")
        available = {o.value for o in sel.options if not o.disabled}
        missing = [v for v in values if v not in available]
        if missing:
            raise FormError(f"<select name={name!r}> has no option(s) {missing}; has {sorted(available)}")
        for o in sel.options:
            o.selected = o.value in values
        return self

    # ---- the data set ------------------------------------------------------
    def data_set(self, click: tuple[str, str] | None = None) -> list[tuple[str, str]]:
        """The form data set a browser would build when ``click`` (name, value) is pressed."""
        submitter: Control | None = None
        if click is not None:
            for c in self.controls:
                if c.is_submit_button and not c.disabled and (c.name, c.value) == click:
                    submitter = c
                    break
            if submitter is None:
                raise FormError(f"no enabled submit button {click!r}; buttons: {self.buttons()}")
        pairs: list[tuple[str, str]] = []
        for c in self.controls:
            if c.disabled or not c.name:
                continue
            if c.is_submit_button:
                if c is submitter:
                    pairs.append((c.name, c.value))
                continue
            if c.tag == "button" or c.type in NEVER_SUBMITTED:
                continue
            if c.tag == "select":
                for o in c.options:
                    if o.selected and not o.disabled:
                        pairs.append((c.name, o.value))
                continue
            if c.tag == "input" and c.type in ("checkbox", "radio"):
                if c.checked:
                    pairs.append((c.name, c.value))
                continue
            pairs.append((c.name, c.value))
        # Browsers normalise line breaks to CRLF in application/x-www-form-urlencoded.
        return [(n, _crlf(v)) for n, v in pairs]

    def encode(self, click: tuple[str, str] | None = None) -> str:
        return urllib.parse.urlencode(self.data_set(click))


def _crlf(s: str) -> str:
    return re.sub(r"\r\n|\r|\n", "\r\n", s)


def _collapse(s: str) -> str:
    return " ".join(s.split())


class _PageParser(HTMLParser):
    def __init__(self, base_url: str):
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.forms: list[Form] = []
        self.form_ids: dict[str, Form] = {}
        self._form_stack: list[Form] = []  # the open <form>, if any
        self._pending_owner: list[tuple[Control, str]] = []  # controls with form="id"
        self._select: Control | None = None
        self._option: Option | None = None
        self._option_text: list[str] = []
        self._option_has_value = False
        self._textarea: Control | None = None
        self._textarea_text: list[str] = []
        self._button: Control | None = None
        self._button_text: list[str] = []
        self._button_has_value = False
        self._fieldset_disabled = 0
        self._fieldset_stack: list[bool] = []
        # Text / element-by-id bookkeeping
        self.text_parts: list[str] = []
        self.ids: dict[str, list[str]] = {}
        self._id_stack: list[tuple[str, str, int]] = []  # (tag, id, depth)
        self._depth = 0
        self.links: list[str] = []
        self._skip_text = 0  # inside <script>/<style>

    # ---- helpers --------------------------------------------------------
    def _add(self, ctl: Control, attrs: dict[str, str]) -> None:
        owner_id = attrs.get("form")
        if owner_id is not None:
            self._pending_owner.append((ctl, owner_id))
        elif self._form_stack:
            self._form_stack[-1].controls.append(ctl)

    def _disabled(self, attrs: dict[str, str]) -> bool:
        return "disabled" in attrs or self._fieldset_disabled > 0

    # ---- HTMLParser hooks ------------------------------------------------
    def handle_starttag(self, tag: str, attr_list: list[tuple[str, str | None]]) -> None:
        attrs = {k: (v if v is not None else "") for k, v in attr_list}
        if tag in ("script", "style"):
            self._skip_text += 1
        if tag not in _VOID:
            self._depth += 1
            if "id" in attrs:
                self._id_stack.append((tag, attrs["id"], self._depth))
                self.ids.setdefault(attrs["id"], [])
        if tag == "a" and "href" in attrs:
            self.links.append(attrs["href"])
        if tag == "form":
            action = attrs.get("action", "")
            form = Form(
                method=(attrs.get("method") or "get").lower(),
                action=urllib.parse.urljoin(self.base_url, action) if action else self.base_url,
                enctype=(attrs.get("enctype") or "application/x-www-form-urlencoded").lower(),
                attrs=attrs,
            )
            if form.method not in ("get", "post"):
                form.method = "get"
            self.forms.append(form)
            if "id" in attrs:
                self.form_ids[attrs["id"]] = form
            if not self._form_stack:  # nested <form> tags are ignored by browsers
                self._form_stack.append(form)
        elif tag == "fieldset":
            d = "disabled" in attrs
            self._fieldset_stack.append(d)
            self._fieldset_disabled += d
        elif tag == "input":
            typ = (attrs.get("type") or "text").lower()
            value = attrs.get("value")
            if value is None:
                value = "on" if typ in ("checkbox", "radio") else ""
            ctl = Control(
                tag="input",
                type=typ,
                name=attrs.get("name"),
                value=value,
                checked="checked" in attrs,
                disabled=self._disabled(attrs),
                readonly="readonly" in attrs,
                attrs=attrs,
            )
            self._add(ctl, attrs)
        elif tag == "select":
            ctl = Control(
                tag="select",
                type="select-multiple" if "multiple" in attrs else "select-one",
                name=attrs.get("name"),
                disabled=self._disabled(attrs),
                attrs=attrs,
            )
            self._add(ctl, attrs)
            self._select = ctl
        elif tag == "option" and self._select is not None:
            self._finish_option()
            self._option = Option(
                value=attrs.get("value", ""),
                selected="selected" in attrs,
                disabled="disabled" in attrs,
            )
            self._option_has_value = "value" in attrs
            self._option_text = []
        elif tag == "textarea":
            ctl = Control(
                tag="textarea",
                type="textarea",
                name=attrs.get("name"),
                disabled=self._disabled(attrs),
                readonly="readonly" in attrs,
                attrs=attrs,
            )
            self._add(ctl, attrs)
            self._textarea = ctl
            self._textarea_text = []
        elif tag == "button":
            ctl = Control(
                tag="button",
                type=(attrs.get("type") or "submit").lower(),
                name=attrs.get("name"),
                value=attrs.get("value", ""),
                disabled=self._disabled(attrs),
                attrs=attrs,
            )
            self._add(ctl, attrs)
            self._button = ctl
            self._button_text = []

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style") and self._skip_text:
            self._skip_text -= 1
        if tag == "form":
            if self._form_stack:
                self._form_stack.pop()
        elif tag == "fieldset" and self._fieldset_stack:
            self._fieldset_disabled -= self._fieldset_stack.pop()
        elif tag == "option":
            self._finish_option()
        elif tag == "select":
            self._finish_option()
            self._finish_select()
        elif tag == "textarea" and self._textarea is not None:
            text = "".join(self._textarea_text)
            if text.startswith("\r\n"):
                text = text[2:]
            elif text.startswith("\n"):  # the HTML parser drops one leading newline
                text = text[1:]
            self._textarea.value = text
            self._textarea = None
        elif tag == "button" and self._button is not None:
            self._button = None
        if tag not in _VOID:
            while self._id_stack and self._id_stack[-1][2] >= self._depth:
                self._id_stack.pop()
            self._depth = max(0, self._depth - 1)

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            self._textarea_text.append(data)
        if self._option is not None:
            self._option_text.append(data)
        if self._button is not None:
            self._button_text.append(data)
        for _tag, ident, _depth in self._id_stack:
            self.ids[ident].append(data)
        if not self._skip_text:
            self.text_parts.append(data)

    def _finish_option(self) -> None:
        if self._option is not None and self._select is not None:
            text = _collapse("".join(self._option_text))
            self._option.text = text
            if not self._option_has_value:
                self._option.value = text
            self._select.options.append(self._option)
        self._option = None

    def _finish_select(self) -> None:
        sel = self._select
        if sel is None:
            return
        if sel.type == "select-one":
            chosen = [o for o in sel.options if o.selected]
            if len(chosen) > 1:  # only the last "selected" wins in a single select
                for o in chosen[:-1]:
                    o.selected = False
            if not chosen:  # a single select with no selection shows its first enabled option
                for o in sel.options:
                    if not o.disabled:
                        o.selected = True
                        break
        self._select = None

    def close(self) -> None:
        super().close()
        for ctl, owner_id in self._pending_owner:
            form = self.form_ids.get(owner_id)
            if form is not None:
                form.controls.append(ctl)
        self._pending_owner = []


_VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "track",
    "wbr",
}


@dataclass
class Page:
    url: str
    status: int
    html: str
    forms: list[Form]
    text: str
    ids: dict[str, str]
    links: list[str]
    response: httpx.Response | None = None

    def element_text(self, element_id: str) -> str:
        if element_id not in self.ids:
            raise FormError(f"no element with id={element_id!r}")
        return self.ids[element_id]

    def form(
        self,
        action_endswith: str | None = None,
        button: tuple[str, str] | None = None,
        field: str | None = None,
    ) -> Form:
        """The single form matching the criteria (by action suffix, a submit button and/or a
        control name it contains)."""
        found = [
            f
            for f in self.forms
            if (action_endswith is None or urllib.parse.urlsplit(f.action).path.endswith(action_endswith))
            and (button is None or f.has_button(*button))
            and (field is None or bool(f.named(field)))
        ]
        if len(found) != 1:
            described = [(f.method, f.action, f.buttons()) for f in self.forms]
            raise FormError(
                f"expected one form (action ending {action_endswith!r}, button {button!r}), "
                f"found {len(found)}; forms: {described}"
            )
        return found[0]


def parse_page(html: str, url: str, status: int = 200, response: httpx.Response | None = None) -> Page:
    p = _PageParser(url)
    p.feed(html)
    p.close()
    return Page(
        url=url,
        status=status,
        html=html,
        forms=p.forms,
        text=_collapse("".join(p.text_parts)),
        ids={k: "".join(v) for k, v in p.ids.items()},
        links=p.links,
        response=response,
    )


class Browser:
    """Keeps cookies (through the given httpx client) and never follows redirects blindly."""

    def __init__(self, client: httpx.AsyncClient):
        if client.follow_redirects:
            raise ValueError("the browser's httpx client must not follow redirects by itself")
        self.client = client

    async def get(self, url: str, follow: bool = False) -> Page:
        resp = await self.client.get(url)
        return await self._page(resp, follow)

    async def submit(
        self,
        form: Form,
        click: tuple[str, str] | None = None,
        follow: bool = False,
    ) -> Page:
        if form.enctype != "application/x-www-form-urlencoded":
            raise FormError(f"unsupported enctype {form.enctype!r}")
        body = form.encode(click)
        if form.method == "post":
            resp = await self.client.post(
                form.action,
                content=body.encode("ascii"),
                headers={"content-type": "application/x-www-form-urlencoded"},
            )
        else:
            parts = urllib.parse.urlsplit(form.action)
            url = urllib.parse.urlunsplit(parts._replace(query=body, fragment=""))
            resp = await self.client.get(url)
        return await self._page(resp, follow)

    async def _page(self, resp: httpx.Response, follow: bool) -> Page:
        hops = 0
        while follow and resp.status_code == 303 and hops < 5:
            location = resp.headers["location"]
            resp = await self.client.get(urllib.parse.urljoin(str(resp.url), location))
            hops += 1
        return parse_page(resp.text, str(resp.url), resp.status_code, resp)


def question_links(page: Page) -> list[str]:
    """Paths of links to question pages (``/questions/<id>``) on ``page``, in order, deduplicated."""
    out: list[str] = []
    for href in page.links:
        path = urllib.parse.urlsplit(urllib.parse.urljoin(page.url, href)).path
        if re.fullmatch(r"/questions/[^/]+", path) and path not in out:
            out.append(path)
    return out


def last_value(pairs: Iterable[tuple[str, str]], name: str) -> str | None:
    """Value a "last value wins" server reads for ``name``."""
    value = None
    for n, v in pairs:
        if n == name:
            value = v
    return value
