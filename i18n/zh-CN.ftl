# mcp-consent 页面：简体中文。键与 en.ftl 完全相同。
# 协议名称（CreateMessageResult、stopReason、tool_use 等）按规范保留英文。

## Numbers, money, times

number = { $value }
money-usd = US${ $amount }
money-usd-under = 不到 US${ $amount }
money-unknown = 未知
time-just-now = 刚刚
time-soon = 不到一分钟后
time-unknown = 时间未知
time-ago = { $unit ->
    [min] { $n } 分钟前
    [h] { $n } 小时前
   *[day] { $n } 天前
}
time-in = { $unit ->
    [min] { $n } 分钟后
    [h] { $n } 小时后
   *[day] { $n } 天后
}
duration = { $unit ->
    [hour] { $n } 小时
    [minute] { $n } 分钟
   *[second] { $n } 秒
}

## Vocabulary (selected by the word's wire name)

kind = { $word ->
    [sampling] 模型请求
    [form] 表单
   *[url] 链接
}
state = { $word ->
    [pending] 待处理
    [accepted] 已接受
    [declined] 已拒绝
    [cancelled] 已取消
    [expired] 已过期
    [withdrawn] 已撤回
   *[completed] 已完成
}
audit-action-name = { $word ->
    [approved] 已批准
    [edited] 已编辑
    [regenerated] 已重新生成
    [rejected] 已驳回
    [auto_approved] 已自动批准
    [delivered] 已送达
    [answered] 已回答
    [declined] 已拒绝
   *[cancelled] 已取消
}
actor = { $word ->
    [server] 服务器
    [human] 本人
   *[agent] 代理
}
actor-rule = 规则 { $id }
yes = 是
no = 否
not-answered = 未回答（不发送）

## Layout and navigation

languages-label = 语言
nav-label = 页面
nav-queue = 队列
nav-history = 历史
nav-audit = 审计
nav-rules = 规则
nav-logout = 退出登录

## Shared actions and columns

action-review-and-send = 检查并发送…
action-decline = 拒绝
action-cancel = 取消
action-review = 查看
action-view = 查看
action-back = 返回
col-kind = 类型
col-server = 服务器
col-question = 问题
col-tool = 工具
col-asked = 提问时间
col-expires = 过期时间
col-outcome = 结果
col-action = 操作
badge-person-only = 仅限本人

## Queue and history

queue-title = { $count ->
    [0] 待处理
   *[other] ({ $count }) 待处理
}
queue-heading = 等待你处理
queue-empty = 没有待处理的问题。服务器提出请求时会显示在这里。
queue-count = { $count } 个问题待处理，最早的在前。
queue-tool = 工具 { $tool }
queue-cut = 显示最早的 { $shown } 个（共 { $count } 个待处理问题）；处理一些后可看到其余的。
queue-hint = 启用 JavaScript 时本页会自动更新；否则请刷新。时间为相对时间；将鼠标悬停可查看本地日期和时间。
history-title = 历史
history-heading = 已决定
history-empty = 还没有已决定的问题。

## Login

login-title = 登录
login-passphrase = 口令
login-submit = 登录
login-or-terminal = 或者以运行本服务的用户身份在终端中运行以下命令，然后打开它输出的链接：
login-terminal = 以运行本服务的用户身份在终端中运行以下命令，然后打开它输出的链接：
login-link-once = 每个链接只能使用一次，几分钟内有效。
login-session-ended = 你的会话已结束（已过期或已退出登录）。请重新登录以继续。
login-link-invalid = 此登录链接无效、已过期或已被使用。
login-wrong-passphrase = 口令错误。

## Errors

error-title = { $status ->
    [400] 请求无效
    [401] 未授权
    [403] 禁止访问
    [404] 未找到
    [409] 冲突
    [413] 内容过大
    [422] 无法处理
    [429] 请求过多
    [500] 内部错误
   *[other] 错误
}
error-back = 返回队列
error-login-required = 请先登录
error-session-ended = 你的会话已结束；请重新登录
error-no-question = 没有此编号的问题。
error-no-page = 此地址没有页面。
error-conflict = 此问题的状态已是“{ $state }”；没有再发送任何内容。
error-too-large = 表单超过 { $bytes } 字节。
error-internal = mcp-consent 内部出错；详情见其日志。
refused-csrf = 表单的安全令牌缺失或已过期；请刷新页面后重试。
refused-human-only = 此问题只能由本人在浏览器中回答。
refused-unreadable-form = 无法读取表单。
refused-choose-action = 请选择接受、拒绝或取消。
refused-choose-decision = 请选择一个决定。
refused-unreadable-confirmation = 无法读取已确认的回答；请重新回答。
refused-accept-only = 这里只确认接受的回答。

## A question's page

question-title = 来自 { $server } 的{ $kind }
question-heading = { $kind ->
    [sampling] { $server } 请求一个模型回复
    [form] { $server } 请你填写信息
   *[url] { $server } 请你打开一个链接
}
live-changed = 此问题已变化；请刷新页面查看。
live-now-state = 此问题现在的状态是“{ $state }”（在你回答时发生了变化）：已无法再发送任何内容。你输入的内容仍保留在本页，可以复制。
live-changed-typed = 此问题在你回答时发生了变化；请刷新页面查看（请先复制你输入的内容）。
meta-server = 服务器
meta-tool = 所在工具调用
meta-kind = 类型
meta-state = 状态
meta-protocol = 协议
meta-protocol-value = { $version }（按 { $era } 判定）
meta-asked = 提问时间
meta-expires = 过期时间
bidi-title = 隐藏的文字方向字符。
bidi-body = 服务器的文字中含有改变字母显示顺序的不可见字符，这是一种让文字看起来像别的东西的伎俩（例如把以“exe”结尾的文件名显示成“…pdf”）。本页将每段服务器文字分开显示，但请仔细阅读。出现在：
bidi-place-server = 服务器名称
bidi-place-tool = 工具
bidi-place-request = 请求
answer-not-sent = 回答未发送
outcome-heading = 结果：{ $state }
outcome-withdrawn = 服务器撤回了此问题：它不再需要回答，因此无需填写；没有发送任何内容。
outcome-expired = 此问题已过期：在截止时间前无人回答；已告知服务器，没有发送其他内容。
outcome-completed = 服务器报告此任务已完成；这里无需再做任何事。
outcome-answered = 此问题已在这里或其他地方（另一个标签页、命令行）回答；无法再发送任何内容。
lost-title = 你的回答未发送
lost-body = ，因为在你回答时问题发生了变化。以下是你输入的内容，可以复制：
outcome-no-response = 没有向服务器发送回复。
outcome-server-received = 服务器收到了：
message-heading = 服务器的消息

## Form questions

form-secret-warning = 此表单似乎在索要机密（密码、令牌或密钥）。服务器不得通过表单索要敏感数据；除非你确定，否则请拒绝。
form-no-fields = 服务器只要求确认；没有需要填写的内容。
form-required = 必填
form-select-none = （无）
form-hint-datetime = RFC 3339，例如 2026-01-31T09:30:00Z
form-hint-range = { $min } 到 { $max }
form-hint-min = 至少 { $min }
form-hint-max = 至多 { $max }
form-hint-integer = 整数
form-hint-integer-range = 整数，{ $min } 到 { $max }
form-hint-integer-min = 整数，至少 { $min }
form-hint-integer-max = 整数，至多 { $max }
form-hint-choose-range = 选择 { $min } 到 { $max } 项
form-hint-choose-min = 至少选择 { $min } 项
form-hint-choose-max = 至多选择 { $max } 项
summary-none-chosen = 未选择
summary-response-text = 回复文本
summary-model-name = 模型名称
summary-your-answer = 你的回答
summary-block = 消息 { $message }，块 { $block }

## URL questions

url-heading = 服务器请你打开此地址
url-local-title = 停一下：这不是公共网址。
url-local-body = 它指向这台计算机、私有网络或一个裸 IP 地址。在那里监听的程序可以收到本浏览器对该主机的 Cookie，包括你的 mcp-consent 会话，并冒充你行事。打开它需要你再确认一次。
url-host-ascii = 书写形式的主机名（ASCII）
url-host-unicode = 显示形式的主机名（Unicode）
url-consent-hint = mcp-consent 自己从不加载此地址。打开它即告诉服务器你同意（它只收到 { $accept }，别无其他）；你在该网站上做的事只在你和它之间。
url-open = 在新标签页中打开 { $domain }
url-open-asks-again = （会再次询问）
url-not-web = 这不是网址（只打开 https 和 http 链接）。
url-invalid = 这不是有效的网址。
url-finding = { $finding ->
    [not-https] 不是 HTTPS：此页面以及你输入的任何内容都以未加密方式传输。
    [internationalized-host] 此地址使用了国际化字符（Punycode）。它可能在模仿一个熟悉的名称：请比较主机名的两种形式。
    [lookalike] 形似主机名：它的 Unicode 形式在模仿另一个名称（混合文字或看起来像拉丁字母的字符），因此以 ASCII 形式显示。不要相信它看起来像的那个名称。
    [credentials] 此地址在主机名前带有用户名或密码；真正的主机是“@”之后的部分。
    [ip-host] 此地址是一个裸 IP 地址，不是名称。
    [no-registrable-domain] 此主机没有可注册域名（不是公共互联网名称）。
   *[local-network] 此地址指向这台计算机或私有网络，而不是互联网。在那里监听的任何程序都会收到本浏览器对该主机的 Cookie，包括 mcp-consent 自己的会话。
}
open-local-title = 打开本地地址？
open-local-heading = 打开 { $domain }（应 { $server } 的请求）？
open-local-warning-title = 此地址不在公共互联网上。
open-local-warning-body = 它指向这台计算机、私有网络或一个裸 IP 地址。在那里监听的程序会收到本浏览器对该主机的 Cookie，包括你的 mcp-consent 会话（Cookie 不按端口区分），并可能冒充你行事。只有当你自己启动了那个程序并预期看到此页面时才打开它。
open-local-consent = 打开它即告诉服务器你同意（它只收到 { $accept }，别无其他）。
open-local-anyway = 仍然打开此本地地址

## Confirm step

confirm-title = 确认
confirm-heading = { $kind ->
    [form] 将此表单回答发送给 { $server }？
    [sampling] 将此模型请求的回答发送给 { $server }？
   *[url] 将此链接回答发送给 { $server }？
}
confirm-nothing-sent = 尚未发送任何内容。请检查你的回答，然后选择“发送”，或返回修改。
confirm-exactly = “发送”会把以下 JSON 原样交给服务器，作为其请求 { $id } 的结果：
confirm-send = 发送
confirm-back = 返回（保留你的回答）

## Sampling questions

sampling-request-heading = 服务器希望模型回答的内容
sampling-original-note = 这是服务器的原始请求；编辑后的提示（第 { $revision } 版）在下方的审核中。
sampling-system-prompt = 系统提示
sampling-messages = 消息
sampling-image-alt = 来自服务器的图片
sampling-image = 图片，{ $mime }
sampling-audio = 音频，{ $mime }
sampling-tool-result = { $id } 的 tool_result
sampling-hints = 模型提示
sampling-none = 无
sampling-priorities = 优先级
sampling-priorities-value = 成本 { $cost }，速度 { $speed }，智能 { $intelligence }
sampling-context-ignored = （已请求但被忽略：不添加任何上下文）
sampling-tools-offered = 提供的工具
sampling-raw-request = 原始请求
review-heading = 模型
review-waiting = 服务器已等待 { $waiting }。请求的第 { $revision } 版。
review-routed = 路由到 { $model }：{ $why }
review-no-model = 无模型
review-no-route = 没有允许的路由：没有配置的模型可以处理此请求。请编辑请求、自己撰写回复，或驳回它。
review-estimate = 估计输入：{ $tokens } 个令牌（{ $method }）；在 { $model } 上的估计费用至多 { $cost }。列表中每个模型都显示自己的估计；被路由排除的模型不能选择。
review-estimate-unrouted = 估计输入：{ $tokens } 个令牌（{ $method }）；在路由到的模型上的估计费用至多 { $cost }。列表中每个模型都显示自己的估计；被路由排除的模型不能选择。
review-run-failed = 上一次在 { $model } 上的运行失败：{ $error }
run-error-missing-key = 存放其 API 密钥的环境变量 { $env } 未设置
run-error-key-file = 其 API 密钥文件 { $message }
run-error-transport = 无法连接到提供方：{ $message }
run-error-timeout = 提供方在 { $seconds } 秒内没有回答（模型的 timeout_secs）；请求已放弃，没有向服务器发送任何内容
run-error-incomplete = 提供方在回答中途停止（回答完成前连接已关闭）；没有向服务器发送任何内容
run-error-status = 提供方返回 HTTP { $status }：{ $message }
run-error-unparseable = 无法解析提供方的响应：{ $message }
run-error-unsupported = 此请求无法发送给它：{ $message }
review-prompt-heading = 将要运行的提示
review-prompt-hint = 如有需要可在此编辑：{ $approve } 会运行这些文本框中的确切内容（更改会记录为新版本并审计）。
review-prompt-original-above = 服务器的原始内容在上方“服务器希望模型回答的内容”下。
review-block-label = 消息 { $message }，块 { $block }
review-approve = 批准并运行
review-save-edits = 保存编辑但不运行
review-reject = 驳回
review-running = 模型 { $model } 正在运行。完成后本页会显示它的回答供你审核（如关闭了 JavaScript 请刷新）。
review-running-unnamed = 模型正在运行。完成后本页会显示它的回答供你审核（如关闭了 JavaScript 请刷新）。
review-answer-from = 来自 { $model } 的回答，stopReason { $stop }，输入 { $input } 个、输出 { $output } 个令牌，费用 { $cost }。尚未向服务器发送任何内容。
review-result-sent = “发送”交付的 CreateMessageResult
review-send = 发送
review-regenerate = 重新生成
model-select-label = 模型（此请求在各模型上的估计费用）
model-option = { $model } — 至多 { $estimate }
model-option-excluded = { $model } — 至多 { $estimate } — 不允许：{ $reason }
manual-heading = 你的回复
manual-intro = 你代替模型回答。服务器会以角色 assistant 的 { $result } 收到它。
manual-text = 回复文本
manual-model = 报告给服务器的模型名称
manual-model-placeholder = 例如 written-by-hand
manual-json-summary = 用完整的 { $result } JSON 回答
manual-json-tools = （例如包含 { $tool_use } 块）

## Routing (the receipt's reasons, rebuilt for the page)

route-why-hint-id = 提示 { $name }（第 { $index } 个）是模型 id 的一部分
route-why-hint-alias = 提示 { $name }（第 { $index } 个）与配置的别名 { $alias } 匹配
route-why-hint-tie = { $why }；它匹配了 { $count } 个可用模型，此模型的优先级得分最高
route-why-priorities = 没有提示匹配可用模型；在 { $count } 个可用模型中优先级得分最高（{ $score }）
route-why-hint-shared = { $why }；它匹配了 { $count } 个可用模型，其中 { $tied } 个的优先级得分并列最高：{ $then }
route-why-all-tied = 没有提示匹配可用模型，优先级也无法区分这 { $count } 个可用模型：{ $then }
route-why-some-tied = 没有提示匹配可用模型；{ $count } 个可用模型中有 { $tied } 个的优先级得分并列最高（{ $score }）：{ $then }
route-why-only-one = 没有提示匹配可用模型；这是唯一可用的模型
route-tie-cheaper = 选择了最便宜的模型（估计最多 { $cost }）
route-tie-id = 它们费用相同，因此按 id 选择了第一个
route-why-no-models = 没有允许的路由：没有配置任何模型
route-why-all-excluded = 没有允许的路由：全部 { $count } 个已配置模型都被排除
exclusion-no-tools = 请求使用了工具，而此模型不支持工具
exclusion-modality = { $modality ->
    [image] 消息中含有图片，而此模型不接受图片
   *[audio] 消息中含有音频，而此模型不接受音频
}
exclusion-over-budget = 估计费用 { $cost } 超过了每个请求的上限 { $cap }
exclusion-server-not-allowed = 服务器 { $server } 不在此模型的允许列表中
token-method-chars = 估计：字符数 / 4
spend-heading = 按服务器和日期的模型花费
spend-hint = 最近 { $days } 天（UTC 日）模型运行的花费，对照 [budgets] 的每日预算。每次运行都计入，包括被重新生成替换或被拒绝的；令牌数和费用以模型服务器报告的为准。在下面的列表中，每次运行的令牌数和费用记在启动它的条目上（已批准、已重新生成）；已送达的条目重复它所发送的那次运行的数值。
spend-empty = 这些天没有运行过模型。
spend-day = 日期（UTC）
spend-runs = 运行次数
spend-budget = 每日预算
spend-runs-value = { $runs }（已送达 { $delivered }）
spend-limit-tokens = { $used } / { $max } 令牌（{ $percent }%）
spend-limit-cost = { $used } / { $max }（{ $percent }%）
spend-no-limit = 无每日限额
spend-exhausted = 已达上限：此服务器今天的下一个请求将被拒绝。
spend-unpriced = { $count } 次没有报告用量
spend-total = 合计

## Decisions (dialogs, Escape, prompt diff, tool use)

skip-link = 跳到正文
url-decision = 打开此地址？
escape-reject-title = 驳回此请求？
escape-decline-title = 拒绝此问题？
escape-reject-body = 你按了 Esc。驳回会告诉服务器请求被拒绝（错误 -1）；不会发送任何模型文本。
escape-decline-body = 你按了 Esc。拒绝会告诉服务器你说了不；你输入的内容都不会发送。
escape-keep = 继续回答
diff-heading = 你对服务器原始内容的修改
diff-removed = 删除：
diff-added = 添加：
diff-unchanged = 未改：
diff-gap = 省略了未修改的行
response-decision = 将此回答发送给 { $server }？
tool-use-asks = 模型请求使用 { $count } 个工具。
tool-use-nothing-runs = 除非你选择“发送”，否则什么都不会运行。
tool-use-lets = 发送后，{ $server } 将以下列参数运行工具 { $tool }

## Sessions and notifications

nav-sessions = 会话
login-remember = 在此浏览器上记住我 30 天
login-session-length = 会话持续 12 小时；如需在此浏览器上保持登录 30 天，请勾选上方的“记住此浏览器”，或登录后使用“会话”页面。
sessions-title = 会话
sessions-intro = 登录到本服务的每个浏览器。撤销会话会立即让该浏览器退出登录。
sessions-browser = 浏览器
sessions-created = 创建时间
sessions-last-used = 最近使用
sessions-this-browser = （此浏览器）
sessions-revoke-others = 退出其他所有地方的登录
notify-kind-form = 请你填写信息
notify-kind-sampling = 请求运行一个模型
notify-kind-url = 请你打开一个链接
notify-ask = 在此浏览器中通知我
notify-on = 有问题出现时，此浏览器会显示通知（在本页打开期间）。

## Audit

audit-title = 审计
audit-heading = 审计日志
audit-hint = 每个模型请求的决定，最新的在前。提示和回复只以 SHA-256 摘要记录。
audit-action = 动作
audit-any = 任意
audit-filter = 筛选
audit-empty = 没有条目。
audit-when = 时间
audit-actor = 执行者
audit-model = 模型
audit-tokens = 令牌
audit-cost = 费用
audit-request = 请求
audit-response = 回复
audit-tokens-value = 输入 { $input } / 输出 { $output }

## Rules

rules-title = 自动批准规则
rules-intro = 除非你添加，否则不启用。规则可让某个服务器的模型请求在路由到的模型上运行而不询问你（范围 { $request }），或者也不经询问就发送模型的回答（范围 { $both }）。每个自动批准的步骤都记录在审计日志中。规则会过期；任何规则都不会接受链接或表单问题。
rules-server = 服务器名称
rules-covers = 覆盖
rules-scope-request = 请求步骤
rules-scope-both = 两个步骤
rules-reason = 原因
rules-days = 有效期（天）
rules-add = 添加规则
rules-empty = 没有规则。
rules-scope = 范围
rules-by = 创建者
rules-created = 创建时间
rules-status = 状态
rules-status-active = 生效中
rules-status-expired = 已过期
rules-status-revoked = 已于 { $at } 撤销
rules-apply = 应用到 { $count } 个等待中的请求
rules-revoke = 撤销

## Problems with an answer (field messages; protocol names stay English)

problem-required = 必填。
problem-not-a-string = 必须是文本。
problem-too-short = 至少需要 { $min } 个字符。
problem-too-long = 最多 { $max } 个字符。
problem-not-a-number = 必须是数字。
problem-not-whole = 必须是整数。
problem-below-minimum = 不能小于 { $min }。
problem-above-maximum = 不能大于 { $max }。
problem-not-boolean = 必须是 true 或 false。
problem-not-yes-no = 请选择“是”、“否”或“不回答”。
problem-not-an-option = “{ $value }”不是可选项之一。
problem-not-a-list = 必须是选项列表。
problem-not-a-list-of-strings = 必须是以文本表示的选项列表。
problem-chosen-twice = 有一个选项被选了两次。
problem-too-few-chosen = 至少选择 { $min } 项。
problem-too-many-chosen = 最多选择 { $max } 项。
problem-format = { $format ->
    [email] 必须是电子邮件地址。
    [uri] 必须是完整地址（URI），例如 https://example.com/。
    [date] 必须是日期（YYYY-MM-DD）。
   *[date-time] 必须是日期和时间（RFC 3339）。
}
problem-not-an-object = 回答必须是 JSON 对象。
problem-unknown-field = 不是此表单的字段。
problem-invalid-json = 不是有效的 JSON：{ $detail }
problem-schema = 回答不符合服务器的架构：{ $detail }
problem-rule = 回答违反了 MCP 的规则：{ $detail }

## Refused review steps

step-outdated = { $what ->
    [request-approval] 此请求批准已过时：问题已有变化。请重新加载页面后再决定。
    [response-approval] 此响应批准已过时：问题已有变化。请重新加载页面后再决定。
    [edit-revision] 此编辑所基于的版本已过时：问题已有变化。请重新加载页面后再决定。
   *[approval] 此批准已过时：问题已有变化。请重新加载页面后再决定。
}
step-already-decided = 此批准已有不同的决定。请重新加载页面查看发生了什么。
step-no-route = 没有已配置的模型可以运行此请求。请编辑请求、自己回答，或拒绝它。
step-unknown-model = 没有名为“{ $model }”的已配置模型。
step-model-excluded = { $model } 不能运行此请求（模型列表中说明了原因）。请选择其他模型、编辑请求，或拒绝它。
step-approval-of-another-question = 此批准属于另一个问题。
step-decision-does-not-fit = 此决定与正在审核的步骤不符。
step-response-decision = 响应只能发送、重新生成或拒绝。
step-edit-with-decision = 编辑过的请求只能被批准。
step-edit-needs-request-approval = 只有请求可以编辑。
step-edit-base-revision = 此编辑基于第 { $base } 版，但批准针对第 { $revision } 版。请重新加载页面后再决定。
step-no-message = 请求中没有第 { $message } 条消息。
step-no-block = 第 { $message } 条消息没有第 { $block } 块。
step-block-not-text = 第 { $message } 条消息的第 { $block } 块不是文本。
step-edit-invalid = 编辑后的请求无效：{ $detail }
step-rule-scope = 请选择规则覆盖的范围：请求步骤，或两个步骤。
step-rule-needs-reason = 规则需要服务器名称和理由。

## Staying signed in

session-day-notice = 你在此浏览器上的登录有效期为 12 小时。

## Desktop notifications (server name and kind only)

notification-question = { $kind ->
    [sampling] { $server } 请求运行一个模型
    [url] { $server } 请你打开一个链接
   *[form] { $server } 请你填写信息
}
notification-waiting = { $count ->
   *[other] { $count } 个问题正在等待
}
