"""Unit tests of the tiny browser (browser.py) against static HTML; no service needed."""

from __future__ import annotations

import urllib.parse

import httpx
import pytest

from browser import Browser, FormError, last_value, parse_page, question_links

PAGE = """<!doctype html>
<html><head><title>Question</title><style>.x{color:red}</style></head>
<body>
<h1>Question from <strong>everything</strong></h1>
<p>Please provide inputs &amp; more</p>
<ul><li><a href="/questions/0192-abc">pending</a></li><li><a href="/questions/0192-abc/answer">x</a></li>
<li><a href="http://127.0.0.1:9/questions/77">abs</a></li><li><a href="/other">o</a></li></ul>
<form method="post" action="/questions/0192-abc/answer">
  <input type="hidden" name="csrf" value="tok&amp;en">
  <input name="field.name" placeholder="Your name">
  <input type="email" name="field.email" value="">
  <input type="date" name="field.birthdate">
  <input type="url" name="field.homepage">
  <input type="number" name="field.integer" value="42" min="1" max="100">
  <input type="text" name="field.firstLine" value="It was a dark and stormy night.">
  <input type="hidden" name="field.check" value="false">
  <input type="checkbox" name="field.check" value="true">
  <input type="checkbox" name="field.agree">
  <select name="field.single">
    <option value="Monica" selected>Monica</option>
    <option value="Rachel">Rachel</option>
    <option disabled value="Gunther">Gunther</option>
  </select>
  <select name="field.nodefault"><option>First one</option><option>Second</option></select>
  <select name="field.multi" multiple>
    <option value="a" selected>A</option><option value="b">B</option><option value="c" selected>C</option>
  </select>
  <input type="hidden" name="field.instruments" value="">
  <label><input type="checkbox" name="field.instruments" value="Guitar" checked> Guitar</label>
  <label><input type="checkbox" name="field.instruments" value="Piano"> Piano</label>
  <input type="radio" name="field.pet" value="cat" checked>
  <input type="radio" name="field.pet" value="dog">
  <textarea name="text">
line one
line &lt;two&gt;</textarea>
  <input name="field.off" value="x" disabled>
  <fieldset disabled><input name="field.fs" value="y"></fieldset>
  <input value="no name">
  <input type="reset" name="r" value="r">
  <button type="button" name="b" value="b">noop</button>
  <button name="action" value="accept">Accept</button>
  <button type="submit" name="action" value="decline">Decline</button>
  <input type="submit" name="action" value="cancel">
</form>
<pre id="payload">{"action": "accept", "content": {"x": "&lt;1&gt;"}}</pre>
<form method="post" action="send"><input type="hidden" name="csrf" value="c2">
  <input type="hidden" name="payload" value="{&quot;a&quot;:1}"><button name="action" value="send">Send</button></form>
<form id="outside" action="/search"></form>
<input form="outside" name="q" value="owned">
<script>var notText = "<b>";</script>
</body></html>
"""

URL = "http://127.0.0.1:8080/questions/0192-abc"


def answer_form():
    return parse_page(PAGE, URL).form(action_endswith="/answer")


def test_page_text_ids_links() -> None:
    page = parse_page(PAGE, URL)
    assert "Question from everything" in page.text
    assert "Please provide inputs & more" in page.text
    assert "notText" not in page.text and ".x{" not in page.text
    assert page.element_text("payload") == '{"action": "accept", "content": {"x": "<1>"}}'
    assert question_links(page) == ["/questions/0192-abc", "/questions/77"]
    with pytest.raises(FormError):
        page.element_text("nope")


def test_forms_found_and_resolved() -> None:
    page = parse_page(PAGE, URL)
    assert [(f.method, f.action) for f in page.forms] == [
        ("post", "http://127.0.0.1:8080/questions/0192-abc/answer"),
        ("post", "http://127.0.0.1:8080/questions/send"),
        ("get", "http://127.0.0.1:8080/search"),
    ]
    send = page.form(button=("action", "send"))
    assert send.hidden("csrf") == "c2" and send.hidden("payload") == '{"a":1}'
    assert page.form(action_endswith="/search").data_set() == [("q", "owned")]
    with pytest.raises(FormError):
        page.form(button=("action", "nope"))


def test_untouched_data_set_is_what_a_browser_sends() -> None:
    form = answer_form()
    assert form.hidden("csrf") == "tok&en"
    assert form.data_set(click=("action", "accept")) == [
        ("csrf", "tok&en"),
        ("field.name", ""),
        ("field.email", ""),
        ("field.birthdate", ""),
        ("field.homepage", ""),
        ("field.integer", "42"),
        ("field.firstLine", "It was a dark and stormy night."),
        ("field.check", "false"),
        ("field.single", "Monica"),
        ("field.nodefault", "First one"),
        ("field.multi", "a"),
        ("field.multi", "c"),
        ("field.instruments", ""),
        ("field.instruments", "Guitar"),
        ("field.pet", "cat"),
        ("text", "line one\r\nline <two>"),
        ("action", "accept"),
    ]
    # no button clicked (e.g. Enter) -> no action pair at all
    assert ("action", "accept") not in form.data_set()


def test_overrides() -> None:
    form = answer_form()
    form.set("field.name", "Grace")
    form.set("field.integer", "7")
    form.set("field.birthdate", "1906-12-09")
    form.set("text", "a\nb")
    form.check("field.check", "true")
    form.check("field.agree")
    form.uncheck("field.instruments", "Guitar")
    form.check("field.instruments", "Piano")
    form.select("field.single", "Rachel")
    form.select("field.multi", "b", "c")
    form.check("field.pet", "dog")
    pairs = form.data_set(click=("action", "decline"))
    assert last_value(pairs, "field.name") == "Grace"
    assert last_value(pairs, "field.integer") == "7"
    assert last_value(pairs, "field.check") == "true"
    assert [v for n, v in pairs if n == "field.check"] == ["false", "true"]
    assert ("field.agree", "on") in pairs
    assert [v for n, v in pairs if n == "field.instruments"] == ["", "Piano"]
    assert [v for n, v in pairs if n == "field.single"] == ["Rachel"]
    assert [v for n, v in pairs if n == "field.multi"] == ["b", "c"]
    assert [v for n, v in pairs if n == "field.pet"] == ["dog"]
    assert last_value(pairs, "text") == "a\r\nb"
    assert pairs[-1] == ("action", "decline") and sum(n == "action" for n, _ in pairs) == 1
    encoded = urllib.parse.parse_qsl(form.encode(click=("action", "cancel")), keep_blank_values=True)
    assert encoded == form.data_set(click=("action", "cancel"))


def test_a_person_cannot_do_impossible_things() -> None:
    form = answer_form()
    with pytest.raises(FormError):
        form.set("csrf", "forged")  # hidden
    with pytest.raises(FormError):
        form.set("field.off", "x")  # disabled
    with pytest.raises(FormError):
        form.select("field.single", "Gunther")  # disabled option
    with pytest.raises(FormError):
        form.select("field.single", "Monica", "Rachel")  # single choice
    with pytest.raises(FormError):
        form.check("field.nothere")
    with pytest.raises(FormError):
        form.uncheck("field.pet", "cat")
    with pytest.raises(FormError):
        form.data_set(click=("b", "b"))  # type=button is not a submit button
    with pytest.raises(FormError):
        form.data_set(click=("action", "send"))


@pytest.mark.anyio
async def test_submit_posts_urlencoded_and_follows_303_only_when_asked() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.method == "POST":
            return httpx.Response(303, headers={"location": "/", "set-cookie": "s=1; HttpOnly"})
        return httpx.Response(200, text=PAGE if request.url.path != "/" else "<p>queue</p>")

    async with httpx.AsyncClient(
        transport=httpx.MockTransport(handler), base_url="http://127.0.0.1:8080", follow_redirects=False
    ) as client:
        browser = Browser(client)
        page = await browser.get("/questions/0192-abc")
        form = page.form(action_endswith="/answer")
        form.set("field.name", "A B&C")
        form.check("field.check", "true")
        resp = await browser.submit(form, click=("action", "accept"))
        assert resp.status == 303 and len(seen) == 2
        post = seen[1]
        assert post.url == "http://127.0.0.1:8080/questions/0192-abc/answer"
        assert post.headers["content-type"] == "application/x-www-form-urlencoded"
        body = post.content.decode()
        assert "field.name=A+B%26C" in body
        assert "field.check=false&field.check=true" in body
        assert urllib.parse.parse_qsl(body, keep_blank_values=True) == form.data_set(click=("action", "accept"))

        followed = await browser.submit(form, click=("action", "accept"), follow=True)
        assert followed.status == 200 and followed.text == "queue"
        assert [r.method for r in seen[2:]] == ["POST", "GET"]
        assert client.cookies.get("s") == "1"

        get_form = page.form(action_endswith="/search")
        await browser.submit(get_form)
        assert seen[-1].method == "GET" and seen[-1].url.query == b"q=owned"

    with pytest.raises(ValueError):
        Browser(httpx.AsyncClient(follow_redirects=True))
