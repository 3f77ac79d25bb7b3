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
    [tool_call] 工具调用
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
    [cancelled] 已取消
    [opened] 已打开链接
    [rule_created] 已创建规则
    [tool_allowed] 工具调用已允许
    [tool_denied] 工具调用已拒止
    [tool_accepted] 工具调用已接受
    [tool_edited] 工具调用已接受（已编辑）
    [tool_declined] 工具调用已拒绝
    [tool_expired] 工具调用已过期
    [grant_made] 已授予许可
    [grant_revoked] 已撤销许可
    [server_paused] 服务器已暂停
    [server_resumed] 暂停已结束
    [server_blocked] 服务器已屏蔽
    [server_unblocked] 屏蔽已解除
    [server_muted] 通知已静音
    [server_unmuted] 通知已恢复
   *[rule_revoked] 已撤销规则
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

## Working the queue, the history, "why am I being asked" (pages/queue.rs, history.rs, why.rs)

queue-filter-label = 筛选队列
queue-search = 搜索
filter-any = 全部
filter-apply = 筛选
filter-clear = 显示全部
queue-group = 按服务器分组
queue-none-match = 没有匹配的待处理问题；共有 { $count } 个在等待。
queue-count-filtered = 显示 { $count } 个待处理问题中的 { $shown } 个。
queue-group-count = { $count } 个等待中
col-select = 选择
queue-select = 选择：
queue-decline-selected = 拒绝所选…
queue-declined = 已拒绝 { $count } 个问题。
queue-declined-skipped = 其中 { $count } 个此前已有决定。
queue-live-added = 队列中新增 { $count } 个问题。
queue-live-gone = { $count } 个问题已离开队列。
servers-heading = 服务器
control-set-over-tcp = 由通过 TCP 的 API 令牌设置
servers-hint = “暂停”会在一小时内拒绝该服务器的新请求；“屏蔽”会一直拒绝，直到你解除；“静音”不再为它的问题发送通知。已在等待的问题保持不变。
server-blocked = 已屏蔽
server-paused-until = 暂停至 { $at }
server-muted = 通知已静音
server-pause = 暂停一小时
server-resume = 恢复
server-block = 屏蔽
server-unblock = 解除屏蔽
server-mute = 静音通知
server-unmute = 取消静音
decline-many-title = 拒绝 { $count } 个问题？
decline-many-body = 每个服务器都会收到拒绝，就像你在各自的页面上逐个拒绝一样。不会发送其他内容。
decline-many-gone = 所选问题中有 { $count } 个已有决定，已略过。
decline-many-none = 所选问题都已不在等待。
decline-many-back = 返回队列
decline-many-confirm = 拒绝 { $count } 个问题
history-hint = 所有已决定的问题，最近的在前：何时、在哪里、由谁决定。
history-filter-label = 搜索历史
history-since = 决定时间
history-since-any = 任何时间
history-period = { $word ->
    [hour] 最近一小时
    [day] 最近一天
    [week] 最近 7 天
   *[month] 最近 30 天
}
history-none-match = 没有匹配的已决定问题。
history-count = { $count } 个已决定的问题。
history-cut = 只显示最近的 200 个匹配结果；缩小搜索范围可查看更早的。
col-decided = 决定于
col-where = 决定方
history-which-rule = （哪条规则）
history-model = 模型 { $model }
place-browser = 你（在浏览器中）
place-cli = 命令行（mcp-consent questions），经本地套接字
place-token = 脚本（API 或命令行），持 API 令牌经 TCP
place-api = 脚本（API 或命令行）
place-rule = 自动批准规则
place-server = 服务器
place-deadline = 无人（已过期限）
place-unknown = 未记录
why-summary = 为什么问我？
why-session = 主机会话
why-session-unknown = 未知（代理没有提供）
why-session-count = 自 { $since } 起，此会话共 { $count } 个问题
why-tool = 工具调用
why-tool-none = 未知：服务器自行提问，并非在主机调用工具期间。
why-tool-call = 它出现在主机调用工具 { $tool } 的过程中。
why-before = 以前的提问
why-before-never = 该服务器以前从未提问。
why-before-count = 该服务器以前提问过 { $count } 次；最近几次及其回答方式：
why-before-all = 历史中该服务器的所有问题
audit-filter-label = 筛选审计日志
audit-kind-server = 服务器控制
via = { $word ->
    [browser] 浏览器
    [cli] 命令行，本地套接字
   *[token] API 令牌
}
audit-kind-rule = 规则
rules-lifetime = 有效期
rules-lifetime-hours = { $count } 小时
rules-lifetime-days = { $count } 天
rules-server-hint = 请选择以前提过问的服务器；列表中会列出它们。
rules-not-created = 未创建规则
rules-incomplete = 请输入服务器名称和理由。
rules-unknown-server = 还没有名为 { $server } 的服务器提过问。
rules-use-suggestion = 使用 { $server }
rules-confirm-unknown = 仍为 { $server } 创建规则
rules-both-warning-title = “两个步骤”会不经审核直接发送。
rules-both-warning = 模型的回答（包括工具调用）会在你看到之前发给服务器：服务器随后可以用无人检查过的参数运行工具。
rules-confirm-both = 我明白：不经审核发送模型的回答，包括工具调用
rules-both-unconfirmed = 请确认“两个步骤”会不经审核发送模型的回答，或只选择请求步骤。

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
error-unavailable = 目前无法连接数据库；没有任何更改。请稍后再试。
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
bidi-title = 服务器文字中的隐藏字符。
bidi-body = 服务器的文字中含有不可见字符：有的会改变字母的显示顺序，这是一种让文字看起来像别的东西的伎俩（例如把以“exe”结尾的文件名显示成“…pdf”）；有的携带你看不到的文字。本页将每段服务器文字分开显示，并尽可能以码位显示这些字符，但请仔细阅读。出现在：
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
form-person-only-because = 仅限本人，因为{ $place }中有“{ $word }”。
form-person-only-every-form = 此处每个表单都仅限本人（forms_person_only 设置）。
sign-in-consent = { $server } 请你在 { $host } 登录。为此，mcp-consent 需要先在那里（{ $registration }）将自己注册为客户端，只发送公开信息：它的名称和登录后返回的本地地址；不发送任何令牌、密钥或你的消息内容。接受则注册，随后显示登录链接；拒绝则不发送任何内容。
form-place-message = 消息
form-place-field-name = 字段 { $field } 的名称
form-place-field-title = 字段 { $field } 的标题
form-place-field-description = 字段 { $field } 的说明
form-place-choice = 字段 { $field } 的选项
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
    [hidden-characters] 此地址含有会改变其显示顺序的不可见字符；这里把它们显示为码位（U+…）。请按这里显示的样子阅读，而不是按消息中的写法。
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
confirm-exactly = “发送”会把以下 JSON 原样交给服务器，作为它的回答（JSON-RPC id { $id }）：
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
run-error-too-large = 提供方的回答超过了 { $bytes } 字节的上限；连接已被切断，回答的任何部分都没有保留，也没有向服务器发送任何内容
run-error-status = 提供方返回 HTTP { $status }：{ $message }
run-error-unparseable = 无法解析提供方的响应：{ $message }
run-error-unsupported = 此请求无法发送给它：{ $message }
review-prompt-heading = 将要运行的提示
review-prompt-hint = 如有需要可在此编辑：{ $approve } 会运行这些文本框中的确切内容（更改会记录为新版本并审计）。
review-prompt-original-above = 服务器的原始内容在上方“服务器希望模型回答的内容”下。
review-block-label = 消息 { $message }（{ $role }），块 { $block }
review-approve = 批准并运行
review-save-edits = 保存编辑但不运行
review-reject = 驳回
review-running = 模型 { $model } 正在运行。完成后本页会显示它的回答供你审核（如关闭了 JavaScript 请刷新）。
review-running-unnamed = 模型正在运行。完成后本页会显示它的回答供你审核（如关闭了 JavaScript 请刷新）。
review-answer-from = 来自 { $model } 的回答，stopReason { $stop }，输入 { $input } 个、输出 { $output } 个令牌，费用 { $cost }。尚未向服务器发送任何内容。
review-result-sent = “发送”交付的 CreateMessageResult
review-send = 发送
review-regenerate = 重新生成
model-select-label = 要运行的模型（此请求在各模型上的估计费用）
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
notify-kind-tool_call = 请求调用
notify-ask = 在此浏览器中通知我
notify-on = 有问题出现时，此浏览器会显示通知（在本页打开期间）。

## Audit

audit-title = 审计
audit-heading = 审计日志
audit-hint = 所有类型问题的每个决定，以及每条规则的创建和撤销，最新的在前。提示、回答和回复只以 SHA-256 摘要记录。
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
    [tool_call] { $server } 请求调用 { $tool }
   *[form] { $server } 请你填写信息
}
notification-waiting = { $count ->
   *[other] { $count } 个问题正在等待
}

## Tool calls

tool-heading = { $server } 想要调用 { $tool }
tool-intro = 你的规则要求你决定这次调用。只有你允许，服务器才会收到它，而且完全按所示（或按你的编辑）发送。
tool-description = 服务器所说的工具用途
tool-annotations = 服务器对该工具的声明
tool-claims-note = 这些是服务器的声明，mcp-consent 未加核实。
question-opened-over-tcp = 这个问题是通过网络、凭 API 令牌发来的，而不是来自本机上的代理。用 --broker 启动的代理会这样提问，任何持有该令牌的人也可以，并可冒用任何服务器的名字。只有在你预期有这样的代理时才回答它，尤其不要轻易提供机密。
tool-opened-over-tcp = 这次调用是通过网络、凭 API 令牌发来的，而不是来自本机上的代理。用 --broker 启动的代理会这样发送调用，任何持有该令牌的人也可以。只有在你预期有这样的代理时才允许它，尤其不要轻易授予权限。
tool-arguments = 参数
tool-no-arguments = 没有参数。
tool-edit = 编辑参数（JSON）
tool-edit-help = 改为发送这些参数。它们会按工具的输入模式检查。
tool-no-schema = mcp-consent 没有看到此工具的输入模式（主机没有通过此代理列出工具），因此接受任何 JSON 对象。
tool-allow-once = 允许一次
tool-decline = 拒绝
tool-grant-legend = 或者从现在起允许此服务器上的此工具
tool-grant-hour = 允许一小时
tool-grant-day = 允许一天
tool-grant-always = 始终允许
tool-grant-note = 许可会立即回答这次调用以及此工具正在等待的调用；可在规则页面撤销。
tool-grants-title = 工具许可
tool-grants-intro = 从工具调用问题中授予的长期许可。每项许可让一个服务器上的一个工具无需询问即可运行，直到过期或你撤销。拒止调用的规则仍然拒止。
tool-grants-empty = 没有工具许可。
tool-grant-expires = 到期
tool-grant-never = 永不（直到撤销）
tool-grant-revoked = 已撤销
tool-grant-revoke = 撤销
tool-preview = 调用 { $tool }

## 问题页面：保护人的警告，一次一个决定

url-warnings-title = 警告：此地址可能并非看上去的那样。
url-hidden-char = 一个不可见字符，以其码位显示
tool-argument-hidden = 此值包含可能改变其读法的不可见字符；它们以码位（U+…）显示。请按此处显示的内容阅读。
url-warning-imitates = 这不是 { $known }：{ $domain } 只是用形似的字母看起来像它。返回是安全的选择。
url-warning-posing = 此地址以 { $known } 开头，但它属于 { $domain }：你在那里输入的内容会交给那个网站，而不是 { $known }。
url-warning-brand = 消息提到了 { $brand }，但此地址不在 { $known } 上：它属于 { $domain }。
url-decline-safe = 不打开：拒绝
url-open-anyway = 仍然打开 { $domain }
role = { $word ->
    [user] 用户
   *[assistant] 助手
}
review-block-fixed = 一个 { $kind } 块：见上方的请求，按原样发送（此处不可编辑）。
review-block-fixed-id = 一个 { $kind } 块，id { $id }：见上方的请求，按原样发送（此处不可编辑）。
question-heading-done = { $kind ->
    [sampling] { $server } 请求过模型回复
    [form] { $server } 请求过你的输入
   *[url] { $server } 请你打开过一个链接
}
lead-tool = 在工具调用 { $tool } 期间
lead-asked = 提问于 { $when }
lead-expires = { $when }过期
deadline-last-minute = 剩余不到一分钟：请现在回答，否则此问题将过期，你输入的内容都无法发送。
deadline-passed = 此问题已过期：再也无法发送任何内容。你输入的内容仍留在此页面上，可以复制。
meta-details = 详情
outcome-when = { $state ->
    [accepted] { $kind ->
        [url] 你于 { $time } 打开了链接；已告知 { $server } 你同意。
       *[other] 已于 { $time } 发送给 { $server }。
    }
    [declined] 已于 { $time } 拒绝；已告知 { $server } 你不同意。
    [cancelled] 已于 { $time } 取消；已告知 { $server }。
    [expired] 已于 { $time } 过期：无人及时回答；已告知 { $server }。
    [withdrawn] { $server } 于 { $time } 撤回了此问题。
   *[completed] { $server } 于 { $time } 报告已完成。
}
outcome-next = { $kind ->
    [sampling] 下一个：{ $server } 请求模型回复
    [form] 下一个：{ $server } 请求你的输入
   *[url] 下一个：{ $server } 请你打开一个链接
}
outcome-more-waiting = { $count ->
   *[other] 之后还有 { $count } 个在等待
}
outcome-none-waiting = 没有其他问题在等待。
outcome-back-to-queue = 返回队列
step-request = 第 1 步（共 2 步）：检查提示词和模型，然后批准运行一次。尚未向服务器发送任何内容。
step-running-hint = 尚未向服务器发送任何内容。回答会先来到这里供你审阅；届时由你决定是否发送。
step-response = 第 2 步（共 2 步）：回答已就绪。请检查后发送给服务器，或拒绝。
regenerate-legend = 或者重新运行此请求
model-regenerate-label = 用于重新生成的模型（此请求在各模型上的预估费用）
model-option-over-cap = { $model } — 最多 { $estimate } — 超出费用上限（需确认）
manual-choice = 不使用模型作答…
sampling-original-note-done = 这是服务器的原始请求；实际运行的编辑后提示词（第 { $revision } 版）保留在下方。
done-heading = 运行了什么
done-edited-prompt = 实际运行的编辑后提示词（第 { $revision } 版）
over-cap-title = 超出费用上限
over-cap-heading = 超出费用上限仍运行 { $model }？
over-cap-body = 此请求在 { $model } 上的预估费用最多为 { $cost }，超过了每个请求 { $cap } 的上限。只有在你确认后模型才会运行；它的回答在发送前仍会先交给你审阅。
over-cap-for = 此请求来自 { $server }。
over-cap-back = 返回，保持在上限内
over-cap-run = 仍然运行 { $model }（最多 { $cost }）
login-session-length-no-box = 会话持续 12 小时；如需在此浏览器上保持登录 30 天，请登录后使用“会话”页面。
