# mcp-consent pages: English (the fallback; every key here exists in zh-CN.ftl and pt-BR.ftl).
# Protocol names (CreateMessageResult, stopReason, tool_use, …) stay as the specification
# writes them. Arguments holding server text are placed as they are.

## Numbers, money, times

number = { $value }
money-usd = ${ $amount }
money-usd-under = less than ${ $amount }
money-unknown = unknown
time-just-now = just now
time-soon = in under a minute
time-unknown = unknown time
time-ago = { $unit ->
    [min] { $n } min ago
    [h] { $n } h ago
   *[day] { $n ->
        [one] { $n } day ago
       *[other] { $n } days ago
    }
}
time-in = { $unit ->
    [min] in { $n } min
    [h] in { $n } h
   *[day] { $n ->
        [one] in { $n } day
       *[other] in { $n } days
    }
}
duration = { $unit ->
    [hour] { $n ->
        [one] { $n } hour
       *[other] { $n } hours
    }
    [minute] { $n ->
        [one] { $n } minute
       *[other] { $n } minutes
    }
   *[second] { $n ->
        [one] { $n } second
       *[other] { $n } seconds
    }
}

## Vocabulary (selected by the word's wire name)

kind = { $word ->
    [sampling] model request
    [form] form
    [tool_call] tool call
   *[url] link
}
state = { $word ->
    [pending] pending
    [accepted] accepted
    [declined] declined
    [cancelled] cancelled
    [expired] expired
    [withdrawn] withdrawn
   *[completed] completed
}
audit-action-name = { $word ->
    [approved] approved
    [edited] edited
    [regenerated] regenerated
    [rejected] rejected
    [auto_approved] auto_approved
    [delivered] delivered
    [answered] answered
    [declined] declined
    [cancelled] cancelled
    [opened] link opened
    [rule_created] rule created
    [tool_allowed] tool call allowed
    [tool_denied] tool call denied
    [tool_accepted] tool call accepted
    [tool_edited] tool call accepted, edited
    [tool_declined] tool call declined
    [tool_expired] tool call expired
    [grant_made] grant made
    [grant_revoked] grant revoked
    [server_paused] server paused
    [server_resumed] pause ended
    [server_blocked] server blocked
    [server_unblocked] block lifted
    [server_muted] notices muted
    [server_unmuted] notices unmuted
   *[rule_revoked] rule revoked
}
actor = { $word ->
    [server] server
    [human] human
   *[agent] agent
}
actor-rule = rule:{ $id }
yes = yes
no = no
not-answered = not answered (left out)

## Layout and navigation

languages-label = Language
nav-label = Pages
nav-queue = Queue
nav-history = History
nav-audit = Audit
nav-rules = Rules
nav-logout = Log out

## Shared actions and columns

action-review-and-send = Review and send…
action-decline = Decline
action-cancel = Cancel
action-review = Review
action-view = View
action-back = Back
col-kind = Kind
col-server = Server
col-question = Question
col-tool = Tool
col-asked = Asked
col-expires = Expires
col-outcome = Outcome
col-action = Action
badge-person-only = person only

## Queue and history

queue-title = { $count ->
    [0] Waiting
   *[other] ({ $count }) Waiting
}
queue-heading = Waiting for you
queue-empty = Nothing is waiting. New requests appear here as servers ask.
queue-count = { $count ->
    [one] { $count } question waiting, oldest first.
   *[other] { $count } questions waiting, oldest first.
}
queue-tool = tool { $tool }
queue-cut = Showing the oldest { $shown } of { $count } waiting questions; answer some to see the rest.
queue-hint = This page updates itself while JavaScript is on; otherwise reload it. Times are relative; hover one for the local date and time.
history-title = History
history-heading = Decided
history-empty = Nothing decided yet.

## Working the queue, the history, "why am I being asked" (pages/queue.rs, history.rs, why.rs)

queue-filter-label = Filter the queue
queue-search = Search
filter-any = any
filter-apply = Filter
filter-clear = Show all
queue-group = Group by server
queue-none-match = { $count ->
    [one] No waiting question matches; { $count } waits in all.
   *[other] No waiting question matches; { $count } wait in all.
}
queue-count-filtered = { $count ->
    [one] Showing { $shown } of { $count } waiting question.
   *[other] Showing { $shown } of { $count } waiting questions.
}
queue-group-count = { $count ->
    [one] { $count } waiting
   *[other] { $count } waiting
}
col-select = Select
queue-select = Select:
queue-decline-selected = Decline selected…
queue-declined = { $count ->
    [one] Declined { $count } question.
   *[other] Declined { $count } questions.
}
queue-declined-skipped = { $count ->
    [one] { $count } was decided already.
   *[other] { $count } were decided already.
}
queue-live-added = { $count ->
    [one] { $count } new question in the queue.
   *[other] { $count } new questions in the queue.
}
queue-live-gone = { $count ->
    [one] { $count } question left the queue.
   *[other] { $count } questions left the queue.
}
servers-heading = Servers
control-set-over-tcp = set by the API token over TCP
servers-hint = Pause refuses a server's new requests for an hour; block refuses them until you unblock it; mute sends no notice for its questions. Questions already waiting stay.
server-blocked = blocked
server-paused-until = paused until { $at }
server-muted = notices muted
server-pause = Pause for an hour
server-resume = Resume
server-block = Block
server-unblock = Unblock
server-mute = Mute notices
server-unmute = Unmute notices
decline-many-title = { $count ->
    [one] Decline { $count } question?
   *[other] Decline { $count } questions?
}
decline-many-body = Each server gets a decline, as if you declined each question on its page. Nothing else is sent.
decline-many-gone = { $count ->
    [one] { $count } selected question was decided already and is left out.
   *[other] { $count } selected questions were decided already and are left out.
}
decline-many-none = None of the selected questions is waiting any more.
decline-many-back = Back to the queue
decline-many-confirm = { $count ->
    [one] Decline { $count } question
   *[other] Decline { $count } questions
}
history-hint = Every decided question, most recent first: when, where and by whom it was decided.
history-filter-label = Search the history
history-since = Decided within
history-since-any = any time
history-period = { $word ->
    [hour] the last hour
    [day] the last day
    [week] the last 7 days
   *[month] the last 30 days
}
history-none-match = No decided question matches.
history-count = { $count ->
    [one] { $count } decided question.
   *[other] { $count } decided questions.
}
history-cut = Only the 200 most recent matches are shown; narrow the search to see older ones.
col-decided = Decided
col-where = Where
history-which-rule = (which rule)
history-model = model { $model }
place-browser = you, in the browser
place-cli = the CLI (mcp-consent questions), over the local socket
place-token = a script (API or CLI) with the API token, over TCP
place-api = a script (API or CLI)
place-rule = an auto-approve rule
place-server = the server
place-deadline = nobody (deadline passed)
place-unknown = not recorded
why-summary = Why am I being asked?
why-session = Host session
why-session-unknown = not known (the proxy did not say)
why-session-count = { $count ->
    [one] { $count } question from this session, since { $since }
   *[other] { $count } questions from this session, since { $since }
}
why-tool = Tool call
why-tool-none = None known: the server asked on its own, not during a tool call the host made.
why-tool-call = It came while the host's call of the tool { $tool } was running.
why-before = Asked before
why-before-never = This server never asked anything before.
why-before-count = { $count ->
    [one] This server asked { $count } time before; how it was answered:
   *[other] This server asked { $count } times before; the latest and how they were answered:
}
why-before-all = Every question of this server in the history
audit-filter-label = Filter the audit log
audit-kind-server = server controls
via = { $word ->
    [browser] in the browser
    [cli] CLI, local socket
   *[token] API token
}
audit-kind-rule = rule
rules-lifetime = Expires after
rules-lifetime-hours = { $count ->
    [one] { $count } hour
   *[other] { $count } hours
}
rules-lifetime-days = { $count ->
    [one] { $count } day
   *[other] { $count } days
}
rules-server-hint = Pick a server that asked before; the list offers them.
rules-not-created = The rule was not created
rules-incomplete = Enter a server name and a reason.
rules-unknown-server = No server named { $server } has asked anything yet.
rules-use-suggestion = Use { $server }
rules-confirm-unknown = Create the rule for { $server } anyway
rules-both-warning-title = Both steps send without review.
rules-both-warning = The model's answer goes to the server without you seeing it, tool calls included: the server can then run tools with arguments nobody checked.
rules-confirm-both = I understand: send the model's answers, tool calls included, without review
rules-both-unconfirmed = Confirm that both steps send the model's answers without review, or choose the request step only.

## Login

login-title = Log in
login-passphrase = Passphrase
login-submit = Log in
login-or-terminal = Or run this in a terminal as the user who runs the service, and open the link it prints:
login-terminal = Run this in a terminal as the user who runs the service, then open the link it prints:
login-link-once = Each link works once and for a few minutes.
login-session-ended = Your session has ended (it expired, or you logged out). Log in again to continue.
login-link-invalid = This login link is invalid, expired or already used.
login-wrong-passphrase = Wrong passphrase.

## Errors

error-title = { $status ->
    [400] Bad Request
    [401] Unauthorized
    [403] Forbidden
    [404] Not Found
    [409] Conflict
    [413] Payload Too Large
    [422] Unprocessable Entity
    [429] Too Many Requests
    [500] Internal Server Error
   *[other] Error
}
error-back = Back to the queue
error-login-required = log in first
error-session-ended = your session has ended; log in again
error-no-question = There is no question with this id.
error-no-page = There is no page at this address.
error-conflict = This question is already { $state }; nothing more was sent.
error-too-large = The form is larger than { $bytes } bytes.
error-internal = Something went wrong inside mcp-consent; the details are in its log.
error-unavailable = The database cannot be reached right now; nothing was changed. Try again shortly.
refused-csrf = The form's security token is missing or out of date; reload the page and try again.
refused-human-only = Only a person may answer this question, in the browser.
refused-unreadable-form = The form could not be read.
refused-choose-action = Choose Accept, Decline or Cancel.
refused-choose-decision = Choose a decision.
refused-unreadable-confirmation = The confirmed answer could not be read; answer again.
refused-accept-only = Only an accepted answer is confirmed here.

## A question's page

question-title = { $kind } from { $server }
question-heading = { $kind ->
    [sampling] { $server } asks for a model response
    [form] { $server } asks for your input
   *[url] { $server } asks you to open a link
}
live-changed = This question changed; reload the page to see it.
live-now-state = This question is now { $state } (it changed while you were answering): nothing can be sent any more. What you entered stays on this page so you can copy it.
live-changed-typed = This question changed while you were answering; reload the page to see it (copy what you typed first).
meta-server = Server
meta-tool = During tool call
meta-kind = Kind
meta-state = State
meta-protocol = Protocol
meta-protocol-value = { $version } (judged as { $era })
meta-asked = Asked
meta-expires = Expires
bidi-title = Hidden characters in the server's text.
bidi-body = The server's text contains invisible characters: some change the order letters are displayed in, a trick to make text look like something it is not (for example a file name ending in "exe" shown as "…pdf"); others carry text you cannot see. This page keeps each piece of server text apart and shows such characters by their code points where it can, but read it with care. Found in:
bidi-place-server = server name
bidi-place-tool = tool
bidi-place-request = request
answer-not-sent = The answer was not sent
outcome-heading = Outcome: { $state }
outcome-withdrawn = The server withdrew this question: it no longer needs an answer, so there is nothing to fill in; nothing was sent.
outcome-expired = This question expired: nobody answered before its deadline; the server was told so and nothing else was sent.
outcome-completed = The server reported this task complete; nothing more is needed here.
outcome-answered = This question has been answered, here or elsewhere (another tab, the command line); nothing more can be sent.
lost-title = Your answer was not sent
lost-body = , because the question changed while you were answering. This is what you had entered, so you can copy it:
outcome-no-response = No response was sent to the server.
outcome-server-received = The server received:
message-heading = Message from the server

## Form questions

form-secret-warning = This form seems to ask for a secret (a password, token or key). Servers must not ask for sensitive data through forms; decline unless you are sure.
form-person-only-because = Person-only because of “{ $word }” in { $place }.
form-person-only-every-form = Every form is person-only here (the forms_person_only setting).
sign-in-consent = { $server } asks you to sign in at { $host }. To do that, mcp-consent must first register itself there as a client, at { $registration }, sending public details only: its name and the local address the sign-in returns to; no token, no secret, nothing of your messages. Accept to register and then see the sign-in link; decline and nothing is sent.
form-place-message = the message
form-place-field-name = the name of field { $field }
form-place-field-title = the title of field { $field }
form-place-field-description = the description of field { $field }
form-place-choice = a choice of field { $field }
form-no-fields = The server asks only for a confirmation; there is nothing to fill in.
form-required = required
form-select-none = (none)
form-hint-datetime = RFC 3339, e.g. 2026-01-31T09:30:00Z
form-hint-range = { $min } to { $max }
form-hint-min = at least { $min }
form-hint-max = at most { $max }
form-hint-integer = whole number
form-hint-integer-range = whole number { $min } to { $max }
form-hint-integer-min = whole number at least { $min }
form-hint-integer-max = whole number at most { $max }
form-hint-choose-range = choose { $min } to { $max }
form-hint-choose-min = choose at least { $min }
form-hint-choose-max = choose at most { $max }
summary-none-chosen = none chosen
summary-response-text = Response text
summary-model-name = Model name
summary-your-answer = Your answer
summary-block = Message { $message }, block { $block }

## URL questions

url-heading = The server asks you to open this address
url-local-title = Stop: this is not a public web address.
url-local-body = It points at this computer, a private network or a bare IP address. A program listening there can receive this browser's cookies for that host, including your mcp-consent session, and act as you. Opening it asks you to confirm a second time.
url-host-ascii = Host as written (ASCII)
url-host-unicode = Host as displayed (Unicode)
url-consent-hint = mcp-consent never loads this address itself. Opening it tells the server you consent (it receives { $accept }, nothing else); what you do on that site stays between you and it.
url-open = Open { $domain } in a new tab
url-open-asks-again = (asks again)
url-not-web = This is not a web address (only https and http links are opened).
url-invalid = This is not a valid web address.
url-finding = { $finding ->
    [hidden-characters] This address holds invisible characters that change how it reads; they are shown as code points (U+…). Read it as shown here, not as the message writes it.
    [not-https] Not HTTPS: this page and anything you type into it travel unencrypted.
    [internationalized-host] This address uses international characters (Punycode). It may imitate a familiar name: compare both forms of the host.
    [lookalike] Look-alike host: its Unicode form imitates another name (mixed scripts or letters that look like Latin ones), so it is shown in its ASCII form. Do not trust the name it appears to be.
    [credentials] This address carries a user name or password before the host; the real host is the part after "@".
    [ip-host] This address is a bare IP address, not a name.
    [no-registrable-domain] This host has no registrable domain (it is not a public internet name).
   *[local-network] This address points at this computer or a private network, not the internet. Whatever listens there receives this browser's cookies for that host, including mcp-consent's own session.
}
open-local-title = Open a local address?
open-local-heading = Open { $domain } for { $server }?
open-local-warning-title = This address is not on the public internet.
open-local-warning-body = It points at this computer, a private network or a bare IP address. Whatever listens there receives this browser's cookies for that host, including your mcp-consent session (cookies are not kept apart by port), and could act as you here. Open it only if you started that program yourself and expect this page.
open-local-consent = Opening it tells the server you consent (it receives { $accept }, nothing else).
open-local-anyway = Open this local address anyway

## Confirm step

confirm-title = Confirm
confirm-heading = { $kind ->
    [form] Send this form answer to { $server }?
    [sampling] Send this sampling answer to { $server }?
   *[url] Send this url answer to { $server }?
}
confirm-nothing-sent = Nothing has been sent yet. Check your answer, then choose "Send" or go back to change it.
confirm-exactly = "Send" delivers exactly this JSON to the server as its answer (JSON-RPC id { $id }):
confirm-send = Send
confirm-back = Back (keeps your answers)

## Sampling questions

sampling-request-heading = What the server wants a model to answer
sampling-original-note = This is the server's original request; the edited prompt (revision { $revision }) is in the review below.
sampling-system-prompt = System prompt
sampling-messages = Messages
sampling-image-alt = image from the server
sampling-image = image, { $mime }
sampling-audio = audio, { $mime }
sampling-tool-result = tool_result for { $id }
sampling-hints = Model hints
sampling-none = none
sampling-priorities = Priorities
sampling-priorities-value = cost { $cost }, speed { $speed }, intelligence { $intelligence }
sampling-context-ignored = (requested and ignored: no context is added)
sampling-tools-offered = Tools offered
sampling-raw-request = Raw request
review-heading = Model
review-waiting = The server has been waiting { $waiting }. Revision { $revision } of the request.
review-routed = Routed to { $model }: { $why }
review-no-model = no model
review-no-route = No permitted route: no configured model may serve this request. Edit the request, write the response yourself, or reject it.
review-estimate = Estimated input: { $tokens } tokens ({ $method }); estimated cost on { $model } at most { $cost }. Each model in the list shows its own estimate; models the route excluded cannot be picked.
review-estimate-unrouted = Estimated input: { $tokens } tokens ({ $method }); estimated cost on the routed model at most { $cost }. Each model in the list shows its own estimate; models the route excluded cannot be picked.
review-run-failed = The last run on { $model } failed: { $error }
run-error-missing-key = the environment variable { $env } holding its API key is not set
run-error-key-file = its API key file { $message }
run-error-transport = cannot reach the provider: { $message }
run-error-timeout = the provider did not answer within { $seconds } seconds (the model's timeout_secs); the request was abandoned and nothing was sent to the server
run-error-incomplete = the provider stopped mid-answer (the connection closed before the answer was complete); nothing was sent to the server
run-error-too-large = the provider's reply was over the limit of { $bytes } bytes; the connection was cut, nothing of the reply was kept and nothing was sent to the server
run-error-status = the provider answered HTTP { $status }: { $message }
run-error-unparseable = unparseable provider response: { $message }
run-error-unsupported = this request cannot be sent to it: { $message }
review-prompt-heading = The prompt that will run
review-prompt-hint = Edit it here if you need to: { $approve } runs exactly what these boxes hold (a change is recorded as a new revision, audited).
review-prompt-original-above = The server's original is above, under "What the server wants a model to answer".
review-block-label = Message { $message } ({ $role }), block { $block }
review-approve = Approve and run
review-save-edits = Save edits without running
review-reject = Reject
review-running = The model { $model } is running. This page shows its answer for review when it is done (reload if JavaScript is off).
review-running-unnamed = The model is running. This page shows its answer for review when it is done (reload if JavaScript is off).
review-answer-from = Answer from { $model }, stopReason { $stop }, { $input } input and { $output } output tokens, cost { $cost }. Nothing has been sent to the server yet.
review-result-sent = The CreateMessageResult "Send" delivers
review-send = Send
review-regenerate = Regenerate
model-select-label = Model to run (estimated cost of this request on each)
model-option = { $model } — at most { $estimate }
model-option-excluded = { $model } — at most { $estimate } — not allowed: { $reason }
manual-heading = Your response
manual-intro = You answer in place of the model. The server receives it as a { $result } with role assistant.
manual-text = Response text
manual-model = Model name reported to the server
manual-model-placeholder = e.g. written-by-hand
manual-json-summary = Answer with a full { $result } as JSON
manual-json-tools = (e.g. with { $tool_use } blocks)

## Routing (the receipt's reasons, rebuilt for the page)

route-why-hint-id = hint { $name } (#{ $index }) is part of the model id
route-why-hint-alias = hint { $name } (#{ $index }) matches the configured alias { $alias }
route-why-hint-tie = { $why }; it matched { $count } eligible models and this one scored highest on the priorities
route-why-priorities = no hint matched an eligible model; highest priorities score { $score } of { $count } eligible models
route-why-hint-shared = { $why }; it matched { $count } eligible models and { $tied } of them share the highest priorities score: { $then }
route-why-all-tied = no hint matched an eligible model and the priorities do not tell the { $count } eligible models apart: { $then }
route-why-some-tied = no hint matched an eligible model; { $tied } of the { $count } eligible models share the highest priorities score ({ $score }): { $then }
route-why-only-one = no hint matched an eligible model; it is the only eligible model
route-tie-cheaper = the cheapest was chosen (estimated at most { $cost })
route-tie-id = they cost the same, so the first by id was chosen
route-why-no-models = no permitted route: no model is configured
route-why-all-excluded = no permitted route: all { $count } configured models were excluded
exclusion-no-tools = the request uses tools and this model does not support tools
exclusion-modality = { $modality ->
    [image] the messages contain an image and this model does not accept images
   *[audio] the messages contain audio and this model does not accept audio
}
exclusion-over-budget = estimated cost { $cost } is over the per-request cap { $cap }
exclusion-server-not-allowed = server { $server } is not in this model's allow-list
token-method-chars = estimate: characters / 4
spend-heading = Model spend per server and day
spend-hint = What model runs cost on the last { $days } days (UTC days), against the daily budgets of [budgets]. Every run counts, also one regenerated away or rejected; tokens and cost are as the model server reported them. In the list below each run's tokens and cost stand on the entry that started it (approved, regenerated); a delivered entry repeats those of the run it sent.
spend-empty = No model ran in these days.
spend-day = Day (UTC)
spend-runs = Runs
spend-budget = Daily budget
spend-runs-value = { $runs } ({ $delivered } delivered)
spend-limit-tokens = { $used } of { $max } tokens ({ $percent }%)
spend-limit-cost = { $used } of { $max } ({ $percent }%)
spend-no-limit = no daily limit
spend-exhausted = Reached: this server's next request today is refused.
spend-unpriced = { $count } without reported usage
spend-total = Total

## Decisions (dialogs, Escape, prompt diff, tool use)

skip-link = Skip to content
url-decision = Open this address?
escape-reject-title = Reject this request?
escape-decline-title = Decline this question?
escape-reject-body = You pressed Escape. Rejecting tells the server the request was refused (error -1); no model text is sent.
escape-decline-body = You pressed Escape. Declining tells the server you said no; nothing you typed is sent.
escape-keep = Keep answering
diff-heading = Your changes to the server's original
diff-removed = removed:
diff-added = added:
diff-unchanged = unchanged:
diff-gap = unchanged lines left out
response-decision = Send this answer to { $server }?
tool-use-asks = { $count ->
    [one] The model asks to use a tool.
   *[other] The model asks to use { $count } tools.
}
tool-use-nothing-runs = Nothing runs unless you choose Send.
tool-use-lets = Sending lets { $server } run the tool { $tool } with these arguments

## Sessions and notifications

nav-sessions = Sessions
login-remember = Remember this browser for 30 days
login-session-length = A session lasts 12 hours; to stay logged in on this browser for 30 days, check "Remember this browser" above or use the Sessions page once logged in.
sessions-title = Sessions
sessions-intro = Every browser logged in to this service. Revoking a session logs that browser out at once.
sessions-browser = Browser
sessions-created = Created
sessions-last-used = Last used
sessions-this-browser = (this browser)
sessions-revoke-others = Log out everywhere else
notify-kind-form = asks for input
notify-kind-sampling = asks to run a model
notify-kind-url = asks you to open a link
notify-kind-tool_call = asks to call
notify-ask = Notify me in this browser
notify-on = This browser shows a notification when a question opens (while this page is open).

## Audit

audit-title = Audit
audit-heading = Audit log
audit-hint = Every decision on every kind of question, and every rule created or revoked, newest first. Prompts, answers and responses are recorded only as SHA-256 digests.
audit-action = Action
audit-any = any
audit-filter = Filter
audit-empty = No entries.
audit-when = When
audit-actor = Actor
audit-model = Model
audit-tokens = Tokens
audit-cost = Cost
audit-request = Request
audit-response = Response
audit-tokens-value = { $input } in / { $output } out

## Rules

rules-title = Auto-approve rules
rules-intro = Off unless you add one. A rule lets one server's sampling requests run on the routed model without asking you (scope { $request }), or also sends the model's answer without asking (scope { $both }). Every auto-approved step is in the audit log. Rules expire; no rule ever accepts a URL or form question.
rules-server = Server name
rules-covers = Covers
rules-scope-request = the request step
rules-scope-both = both steps
rules-reason = Reason
rules-add = Add rule
rules-empty = No rules.
rules-scope = Scope
rules-by = By
rules-created = Created
rules-status = Status
rules-status-active = active
rules-status-expired = expired
rules-status-revoked = revoked { $at }
rules-apply = { $count ->
    [one] Apply to the { $count } waiting request
   *[other] Apply to the { $count } waiting requests
}
rules-revoke = Revoke

## Problems with an answer (field messages; protocol names stay English)

problem-required = Required.
problem-not-a-string = Must be text.
problem-too-short = { $min ->
    [one] Must be at least { $min } character long.
   *[other] Must be at least { $min } characters long.
}
problem-too-long = { $max ->
    [one] Must be at most { $max } character long.
   *[other] Must be at most { $max } characters long.
}
problem-not-a-number = Must be a number.
problem-not-whole = Must be a whole number.
problem-below-minimum = Must be at least { $min }.
problem-above-maximum = Must be at most { $max }.
problem-not-boolean = Must be true or false.
problem-not-yes-no = Choose yes, no or not answered.
problem-not-an-option = “{ $value }” is not one of the options.
problem-not-a-list = Must be a list of options.
problem-not-a-list-of-strings = Must be a list of options given as text.
problem-chosen-twice = An option is chosen twice.
problem-too-few-chosen = { $min ->
    [one] Choose at least { $min } option.
   *[other] Choose at least { $min } options.
}
problem-too-many-chosen = { $max ->
    [one] Choose at most { $max } option.
   *[other] Choose at most { $max } options.
}
problem-format = { $format ->
    [email] Must be an email address.
    [uri] Must be an absolute address (URI), such as https://example.com/.
    [date] Must be a date (YYYY-MM-DD).
   *[date-time] Must be a date and time (RFC 3339).
}
problem-not-an-object = The answer must be a JSON object.
problem-unknown-field = Not a field of this form.
problem-invalid-json = Not valid JSON: { $detail }
problem-schema = The answer does not fit the server's schema: { $detail }
problem-rule = The answer breaks a rule of MCP: { $detail }

## Refused review steps

step-outdated = { $what ->
    [request-approval] This request approval is out of date: the question moved on. Reload the page and decide again.
    [response-approval] This response approval is out of date: the question moved on. Reload the page and decide again.
    [edit-revision] This edit was made on a revision that is out of date: the question moved on. Reload the page and decide again.
   *[approval] This approval is out of date: the question moved on. Reload the page and decide again.
}
step-already-decided = This approval was already decided differently. Reload the page to see what happened.
step-no-route = No configured model may run this request. Edit the request, answer it yourself, or reject it.
step-unknown-model = There is no configured model “{ $model }”.
step-model-excluded = { $model } may not run this request (the model list says why). Pick another model, edit the request, or reject it.
step-approval-of-another-question = This approval belongs to another question.
step-decision-does-not-fit = This decision does not fit the step under review.
step-response-decision = A response is sent, regenerated or rejected.
step-edit-with-decision = An edited request can only be approved.
step-edit-needs-request-approval = Only the request can be edited.
step-edit-base-revision = The edit was made on revision { $base }, but the approval is for revision { $revision }. Reload the page and decide again.
step-no-message = The request has no message { $message }.
step-no-block = Message { $message } has no block { $block }.
step-block-not-text = Block { $block } of message { $message } is not text.
step-edit-invalid = The edited request is not valid: { $detail }
step-rule-scope = Choose what the rule covers: the request step, or both steps.
step-rule-needs-reason = A rule needs a server name and a reason.

## Staying signed in

session-day-notice = You are signed in for 12 hours on this browser.

## Desktop notifications (server name and kind only)

notification-question = { $kind ->
    [sampling] { $server } asks to run a model
    [url] { $server } asks you to open a link
    [tool_call] { $server } asks to call { $tool }
   *[form] { $server } asks for input
}
notification-waiting = { $count ->
    [one] { $count } question is waiting
   *[other] { $count } questions are waiting
}

## Tool calls

tool-heading = { $server } wants to call { $tool }
tool-intro = Your rules ask you about this call. The server receives it only if you allow it, and then exactly as shown (or as you edit it).
tool-description = What the server says the tool does
tool-annotations = What the server claims about the tool
tool-claims-note = These are claims of the server, not checked by mcp-consent.
question-opened-over-tcp = This question came over the network with the API token, not from a proxy on this computer. A proxy started with --broker asks this way, and so can anyone who holds the token, under any server's name. Answer it, above all with a secret, only if you expect such a proxy.
tool-opened-over-tcp = This call came over the network with the API token, not from a proxy on this computer. A proxy started with --broker sends its calls this way, and so can anyone who holds the token. Allow it, and above all grant anything, only if you expect such a proxy.
tool-arguments = Arguments
tool-no-arguments = No arguments.
tool-edit = Edit the arguments (JSON)
tool-edit-help = Send these arguments instead. They are checked against the tool's input schema.
tool-no-schema = mcp-consent has not seen this tool's input schema (the host did not list the tools through this proxy), so any JSON object is accepted.
tool-allow-once = Allow once
tool-decline = Decline
tool-grant-legend = Or allow this tool on this server from now on
tool-grant-hour = Allow for an hour
tool-grant-day = Allow for a day
tool-grant-always = Always allow
tool-grant-note = A grant answers this call and the waiting calls of this tool at once; revoke it on the rules page.
tool-grants-title = Tool grants
tool-grants-intro = Standing permissions made from tool-call questions. Each lets one tool on one server run without asking, until it expires or you revoke it. A rule that denies a call still denies it.
tool-grants-empty = No tool grants.
tool-grant-expires = Expires
tool-grant-never = never (until revoked)
tool-grant-revoked = revoked
tool-grant-revoke = Revoke
tool-preview = calls { $tool }

## Question pages: warnings that protect, one decision at a time

url-warnings-title = Warning: this address may not be what it seems.
url-hidden-char = An invisible character, shown by its code point
tool-argument-hidden = This value holds invisible characters that can change how it reads; they are shown as code points (U+…). Read it as shown here.
url-warning-imitates = This is not { $known }: { $domain } only looks like it, with letters that look alike. Going back is the safe choice.
url-warning-posing = The address starts with { $known }, but it belongs to { $domain }: that site, not { $known }, gets what you type there.
url-warning-brand = The message names { $brand }, but this address is not on { $known }: it belongs to { $domain }.
url-decline-safe = Don't open: decline
url-open-anyway = Open { $domain } anyway
role = { $word ->
    [user] user
   *[assistant] assistant
}
review-block-fixed = A { $kind } block: shown in the request above, sent as it is (not editable here).
review-block-fixed-id = A { $kind } block, id { $id }: shown in the request above, sent as it is (not editable here).
question-heading-done = { $kind ->
    [sampling] { $server } asked for a model response
    [form] { $server } asked for your input
   *[url] { $server } asked you to open a link
}
lead-tool = During the tool call { $tool }
lead-asked = asked { $when }
lead-expires = expires { $when }
deadline-last-minute = Less than a minute left: answer now, or this question expires and nothing you enter can be sent.
deadline-passed = This question has expired: nothing can be sent any more. What you entered stays on this page so you can copy it.
meta-details = Details
outcome-when = { $state ->
    [accepted] { $kind ->
        [url] You opened the link at { $time }; { $server } was told you consent.
       *[other] Sent to { $server } at { $time }.
    }
    [declined] Declined at { $time }; { $server } was told you said no.
    [cancelled] Cancelled at { $time }; { $server } was told.
    [expired] Expired at { $time }: nobody answered in time; { $server } was told.
    [withdrawn] { $server } withdrew this question at { $time }.
   *[completed] { $server } reported it complete at { $time }.
}
outcome-next = { $kind ->
    [sampling] Next: { $server } asks for a model response
    [form] Next: { $server } asks for your input
   *[url] Next: { $server } asks you to open a link
}
outcome-more-waiting = { $count ->
    [one] and 1 more waiting
   *[other] and { $count } more waiting
}
outcome-none-waiting = No other question is waiting.
outcome-back-to-queue = Back to the queue
step-request = Step 1 of 2: check the prompt and the model, then approve one run. Nothing has been sent to the server.
step-running-hint = Nothing has been sent to the server. The answer comes here for your review; you decide then whether it is sent.
step-response = Step 2 of 2: the answer is ready. Check it, then Send it to the server or Reject it.
regenerate-legend = Or run the request again
model-regenerate-label = Model for Regenerate (estimated cost of this request on each)
model-option-over-cap = { $model } — at most { $estimate } — over the cost cap (asks to confirm)
manual-choice = Answer without a model…
sampling-original-note-done = This is the server's original request; the edited prompt that ran (revision { $revision }) is kept below.
done-heading = What ran
done-edited-prompt = The edited prompt that ran (revision { $revision })
over-cap-title = Over the cost cap
over-cap-heading = Run { $model } over the cost cap?
over-cap-body = This request is estimated to cost up to { $cost } on { $model }, more than the cap of { $cap } per request. The model runs only once you confirm; its answer still comes back for your review before anything is sent.
over-cap-for = The request is from { $server }.
over-cap-back = Back, keep within the cap
over-cap-run = Run { $model } anyway (up to { $cost })
login-session-length-no-box = A session lasts 12 hours; to stay logged in on this browser for 30 days, use the Sessions page once logged in.
