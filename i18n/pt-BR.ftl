# Páginas do mcp-consent: português do Brasil. As chaves são as mesmas de en.ftl.
# Nomes do protocolo (CreateMessageResult, stopReason, tool_use, …) ficam como a especificação
# os escreve.

## Numbers, money, times

number = { $value }
money-usd = US$ { $amount }
money-usd-under = menos de US$ { $amount }
money-unknown = desconhecido
time-just-now = agora mesmo
time-soon = em menos de um minuto
time-unknown = hora desconhecida
time-ago = { $unit ->
    [min] há { $n } min
    [h] há { $n } h
   *[day] { $n ->
        [one] há { $n } dia
       *[other] há { $n } dias
    }
}
time-in = { $unit ->
    [min] em { $n } min
    [h] em { $n } h
   *[day] { $n ->
        [one] em { $n } dia
       *[other] em { $n } dias
    }
}
duration = { $unit ->
    [hour] { $n ->
        [one] { $n } hora
       *[other] { $n } horas
    }
    [minute] { $n ->
        [one] { $n } minuto
       *[other] { $n } minutos
    }
   *[second] { $n ->
        [one] { $n } segundo
       *[other] { $n } segundos
    }
}

## Vocabulary (selected by the word's wire name)

kind = { $word ->
    [sampling] pedido ao modelo
    [form] formulário
    [tool_call] chamada de ferramenta
   *[url] link
}
state = { $word ->
    [pending] pendente
    [accepted] aceita
    [declined] recusada
    [cancelled] cancelada
    [expired] expirada
    [withdrawn] retirada
   *[completed] concluída
}
audit-action-name = { $word ->
    [approved] aprovado
    [edited] editado
    [regenerated] gerado de novo
    [rejected] rejeitado
    [auto_approved] aprovado automaticamente
    [delivered] entregue
    [answered] respondido
    [declined] recusado
    [cancelled] cancelado
    [opened] link aberto
    [rule_created] regra criada
    [tool_allowed] chamada permitida
    [tool_denied] chamada negada
    [tool_accepted] chamada aceita
    [tool_edited] chamada aceita, editada
    [tool_declined] chamada recusada
    [tool_expired] chamada expirada
    [grant_made] permissão concedida
    [grant_revoked] permissão revogada
    [server_paused] servidor pausado
    [server_resumed] pausa encerrada
    [server_blocked] servidor bloqueado
    [server_unblocked] bloqueio removido
    [server_muted] avisos silenciados
    [server_unmuted] avisos reativados
   *[rule_revoked] regra revogada
}
actor = { $word ->
    [server] servidor
    [human] pessoa
   *[agent] agente
}
actor-rule = regra { $id }
yes = sim
no = não
not-answered = sem resposta (omitido)

## Layout and navigation

languages-label = Idioma
nav-label = Páginas
nav-queue = Fila
nav-history = Histórico
nav-audit = Auditoria
nav-rules = Regras
nav-logout = Sair

## Shared actions and columns

action-review-and-send = Revisar e enviar…
action-decline = Recusar
action-cancel = Cancelar
action-review = Revisar
action-view = Ver
action-back = Voltar
col-kind = Tipo
col-server = Servidor
col-question = Pergunta
col-tool = Ferramenta
col-asked = Feita
col-expires = Expira
col-outcome = Resultado
col-action = Ação
badge-person-only = só uma pessoa

## Queue and history

queue-title = { $count ->
    [0] Aguardando
   *[other] ({ $count }) Aguardando
}
queue-heading = Aguardando você
queue-empty = Nada aguardando. Novos pedidos aparecem aqui quando os servidores perguntam.
queue-count = { $count ->
    [one] { $count } pergunta aguardando, a mais antiga primeiro.
   *[other] { $count } perguntas aguardando, as mais antigas primeiro.
}
queue-tool = ferramenta { $tool }
queue-cut = Mostrando as { $shown } mais antigas de { $count } perguntas aguardando; responda algumas para ver o resto.
queue-hint = Esta página se atualiza sozinha com o JavaScript ativado; sem ele, recarregue. Os horários são relativos; passe o mouse sobre um para ver a data e a hora locais.
history-title = Histórico
history-heading = Decididas
history-empty = Nada decidido ainda.

## Working the queue, the history, "why am I being asked" (pages/queue.rs, history.rs, why.rs)

queue-filter-label = Filtrar a fila
queue-search = Buscar
filter-any = qualquer
filter-apply = Filtrar
filter-clear = Mostrar tudo
queue-group = Agrupar por servidor
queue-none-match = { $count ->
    [one] Nenhuma pergunta em espera corresponde; { $count } espera no total.
   *[other] Nenhuma pergunta em espera corresponde; { $count } esperam no total.
}
queue-count-filtered = { $count ->
    [one] Mostrando { $shown } de { $count } pergunta em espera.
   *[other] Mostrando { $shown } de { $count } perguntas em espera.
}
queue-group-count = { $count ->
    [one] { $count } em espera
   *[other] { $count } em espera
}
col-select = Selecionar
queue-select = Selecionar:
queue-decline-selected = Recusar as selecionadas…
queue-declined = { $count ->
    [one] { $count } pergunta recusada.
   *[other] { $count } perguntas recusadas.
}
queue-declined-skipped = { $count ->
    [one] { $count } já estava decidida.
   *[other] { $count } já estavam decididas.
}
queue-live-added = { $count ->
    [one] { $count } pergunta nova na fila.
   *[other] { $count } perguntas novas na fila.
}
queue-live-gone = { $count ->
    [one] { $count } pergunta saiu da fila.
   *[other] { $count } perguntas saíram da fila.
}
servers-heading = Servidores
control-set-over-tcp = definido pelo token da API via TCP
servers-hint = Pausar recusa os pedidos novos de um servidor por uma hora; bloquear os recusa até você desbloquear; silenciar não envia avisos das perguntas dele. As perguntas que já esperam continuam.
server-blocked = bloqueado
server-paused-until = pausado até { $at }
server-muted = avisos silenciados
server-pause = Pausar por uma hora
server-resume = Retomar
server-block = Bloquear
server-unblock = Desbloquear
server-mute = Silenciar avisos
server-unmute = Reativar avisos
decline-many-title = { $count ->
    [one] Recusar { $count } pergunta?
   *[other] Recusar { $count } perguntas?
}
decline-many-body = Cada servidor recebe uma recusa, como se você recusasse cada pergunta na página dela. Nada mais é enviado.
decline-many-gone = { $count ->
    [one] { $count } pergunta selecionada já estava decidida e fica de fora.
   *[other] { $count } perguntas selecionadas já estavam decididas e ficam de fora.
}
decline-many-none = Nenhuma das perguntas selecionadas está mais em espera.
decline-many-back = Voltar à fila
decline-many-confirm = { $count ->
    [one] Recusar { $count } pergunta
   *[other] Recusar { $count } perguntas
}
history-hint = Cada pergunta decidida, a mais recente primeiro: quando, onde e por quem foi decidida.
history-filter-label = Buscar no histórico
history-since = Decididas em
history-since-any = qualquer momento
history-period = { $word ->
    [hour] na última hora
    [day] no último dia
    [week] nos últimos 7 dias
   *[month] nos últimos 30 dias
}
history-none-match = Nenhuma pergunta decidida corresponde.
history-count = { $count ->
    [one] { $count } pergunta decidida.
   *[other] { $count } perguntas decididas.
}
history-cut = Só as 200 correspondências mais recentes aparecem; restrinja a busca para ver as mais antigas.
col-decided = Decidida
col-where = Onde
history-which-rule = (qual regra)
history-model = modelo { $model }
place-browser = você, no navegador
place-cli = a CLI (mcp-consent questions), pelo socket local
place-token = um script (API ou CLI) com o token da API, por TCP
place-api = um script (API ou CLI)
place-rule = uma regra de aprovação automática
place-server = o servidor
place-deadline = ninguém (prazo esgotado)
place-unknown = não registrado
why-summary = Por que estão me perguntando?
why-session = Sessão do host
why-session-unknown = desconhecida (o proxy não informou)
why-session-count = { $count ->
    [one] { $count } pergunta desta sessão, desde { $since }
   *[other] { $count } perguntas desta sessão, desde { $since }
}
why-tool = Chamada de ferramenta
why-tool-none = Nenhuma conhecida: o servidor perguntou por conta própria, não durante uma chamada de ferramenta do host.
why-tool-call = Veio enquanto a chamada do host à ferramenta { $tool } estava em andamento.
why-before = Perguntou antes
why-before-never = Este servidor nunca perguntou nada antes.
why-before-count = { $count ->
    [one] Este servidor perguntou { $count } vez antes; como foi respondida:
   *[other] Este servidor perguntou { $count } vezes antes; as mais recentes e como foram respondidas:
}
why-before-all = Todas as perguntas deste servidor no histórico
audit-filter-label = Filtrar o registro de auditoria
audit-kind-server = controles do servidor
via = { $word ->
    [browser] no navegador
    [cli] CLI, socket local
   *[token] token da API
}
audit-kind-rule = regra
rules-lifetime = Expira após
rules-lifetime-hours = { $count ->
    [one] { $count } hora
   *[other] { $count } horas
}
rules-lifetime-days = { $count ->
    [one] { $count } dia
   *[other] { $count } dias
}
rules-server-hint = Escolha um servidor que já perguntou; a lista mostra quais.
rules-not-created = A regra não foi criada
rules-incomplete = Informe o nome de um servidor e um motivo.
rules-unknown-server = Nenhum servidor chamado { $server } perguntou nada ainda.
rules-use-suggestion = Usar { $server }
rules-confirm-unknown = Criar a regra para { $server } mesmo assim
rules-both-warning-title = As duas etapas enviam sem revisão.
rules-both-warning = A resposta do modelo vai ao servidor sem você vê-la, chamadas de ferramenta incluídas: o servidor pode então executar ferramentas com argumentos que ninguém conferiu.
rules-confirm-both = Entendo: enviar as respostas do modelo, chamadas de ferramenta incluídas, sem revisão
rules-both-unconfirmed = Confirme que as duas etapas enviam as respostas do modelo sem revisão, ou escolha só a etapa do pedido.

## Login

login-title = Entrar
login-passphrase = Frase secreta
login-submit = Entrar
login-or-terminal = Ou execute isto num terminal, como o usuário que executa o serviço, e abra o link que ele mostrar:
login-terminal = Execute isto num terminal, como o usuário que executa o serviço, e depois abra o link que ele mostrar:
login-link-once = Cada link funciona uma única vez, por poucos minutos.
login-session-ended = Sua sessão terminou (expirou, ou você saiu). Entre de novo para continuar.
login-link-invalid = Este link de acesso é inválido, expirou ou já foi usado.
login-wrong-passphrase = Frase secreta errada.

## Errors

error-title = { $status ->
    [400] Pedido inválido
    [401] Não autorizado
    [403] Proibido
    [404] Não encontrado
    [409] Conflito
    [413] Conteúdo grande demais
    [422] Não processável
    [429] Pedidos demais
    [500] Erro interno
   *[other] Erro
}
error-back = Voltar para a fila
error-login-required = entre primeiro
error-session-ended = sua sessão terminou; entre de novo
error-no-question = Não há pergunta com este id.
error-no-page = Não há página neste endereço.
error-conflict = Esta pergunta já está { $state }; nada mais foi enviado.
error-too-large = O formulário passa de { $bytes } bytes.
error-internal = Algo deu errado dentro do mcp-consent; os detalhes estão no log dele.
error-unavailable = O banco de dados não pode ser alcançado agora; nada foi alterado. Tente de novo em instantes.
refused-csrf = O token de segurança do formulário está ausente ou desatualizado; recarregue a página e tente de novo.
refused-human-only = Só uma pessoa pode responder a esta pergunta, no navegador.
refused-unreadable-form = Não foi possível ler o formulário.
refused-choose-action = Escolha Aceitar, Recusar ou Cancelar.
refused-choose-decision = Escolha uma decisão.
refused-unreadable-confirmation = Não foi possível ler a resposta confirmada; responda de novo.
refused-accept-only = Só uma resposta aceita é confirmada aqui.

## A question's page

question-title = { $kind } de { $server }
question-heading = { $kind ->
    [sampling] { $server } pede uma resposta de um modelo
    [form] { $server } pede informações a você
   *[url] { $server } pede que você abra um link
}
live-changed = Esta pergunta mudou; recarregue a página para vê-la.
live-now-state = Esta pergunta agora está { $state } (mudou enquanto você respondia): nada mais pode ser enviado. O que você digitou continua nesta página para você copiar.
live-changed-typed = Esta pergunta mudou enquanto você respondia; recarregue a página para vê-la (copie antes o que digitou).
meta-server = Servidor
meta-tool = Durante a chamada da ferramenta
meta-kind = Tipo
meta-state = Estado
meta-protocol = Protocolo
meta-protocol-value = { $version } (julgado como { $era })
meta-asked = Feita
meta-expires = Expira
bidi-title = Caracteres ocultos no texto do servidor.
bidi-body = O texto do servidor contém caracteres invisíveis: alguns mudam a ordem em que as letras aparecem, um truque para fazer um texto parecer o que não é (por exemplo, um nome de arquivo terminado em "exe" exibido como "…pdf"); outros carregam texto que você não consegue ver. Esta página mantém cada trecho de texto do servidor separado e mostra esses caracteres pelos seus pontos de código onde pode, mas leia com cuidado. Encontrados em:
bidi-place-server = nome do servidor
bidi-place-tool = ferramenta
bidi-place-request = pedido
answer-not-sent = A resposta não foi enviada
outcome-heading = Resultado: { $state }
outcome-withdrawn = O servidor retirou esta pergunta: ela não precisa mais de resposta, então não há nada a preencher; nada foi enviado.
outcome-expired = Esta pergunta expirou: ninguém respondeu antes do prazo; o servidor foi avisado e nada mais foi enviado.
outcome-completed = O servidor informou que esta tarefa foi concluída; não é preciso fazer mais nada aqui.
outcome-answered = Esta pergunta já foi respondida, aqui ou em outro lugar (outra aba, a linha de comando); nada mais pode ser enviado.
lost-title = Sua resposta não foi enviada
lost-body = , porque a pergunta mudou enquanto você respondia. Isto é o que você tinha digitado, para você copiar:
outcome-no-response = Nenhuma resposta foi enviada ao servidor.
outcome-server-received = O servidor recebeu:
message-heading = Mensagem do servidor

## Form questions

form-secret-warning = Este formulário parece pedir um segredo (uma senha, um token ou uma chave). Servidores não devem pedir dados sensíveis por formulários; recuse, a menos que tenha certeza.
form-person-only-because = Só uma pessoa, por causa de “{ $word }” em { $place }.
form-person-only-every-form = Aqui todo formulário é só para uma pessoa (a opção forms_person_only).
sign-in-consent = { $server } pede que você entre em { $host }. Para isso, o mcp-consent precisa antes se registrar lá como cliente, em { $registration }, enviando apenas dados públicos: o nome dele e o endereço local para onde o login volta; nenhum token, nenhum segredo, nada das suas mensagens. Aceite para registrar e depois ver o link de login; recuse e nada é enviado.
form-place-message = a mensagem
form-place-field-name = o nome do campo { $field }
form-place-field-title = o título do campo { $field }
form-place-field-description = a descrição do campo { $field }
form-place-choice = uma opção do campo { $field }
form-no-fields = O servidor pede só uma confirmação; não há nada a preencher.
form-required = obrigatório
form-select-none = (nenhum)
form-hint-datetime = RFC 3339, por exemplo 2026-01-31T09:30:00Z
form-hint-range = de { $min } a { $max }
form-hint-min = no mínimo { $min }
form-hint-max = no máximo { $max }
form-hint-integer = número inteiro
form-hint-integer-range = número inteiro de { $min } a { $max }
form-hint-integer-min = número inteiro, no mínimo { $min }
form-hint-integer-max = número inteiro, no máximo { $max }
form-hint-choose-range = escolha de { $min } a { $max }
form-hint-choose-min = escolha pelo menos { $min }
form-hint-choose-max = escolha no máximo { $max }
summary-none-chosen = nenhuma escolhida
summary-response-text = Texto da resposta
summary-model-name = Nome do modelo
summary-your-answer = Sua resposta
summary-block = Mensagem { $message }, bloco { $block }

## URL questions

url-heading = O servidor pede que você abra este endereço
url-local-title = Pare: este não é um endereço público da web.
url-local-body = Ele aponta para este computador, uma rede privada ou um endereço IP puro. Um programa escutando ali pode receber os cookies deste navegador para esse host, inclusive sua sessão do mcp-consent, e agir em seu nome. Abri-lo pede uma segunda confirmação.
url-host-ascii = Host como escrito (ASCII)
url-host-unicode = Host como exibido (Unicode)
url-consent-hint = O mcp-consent nunca carrega este endereço sozinho. Abri-lo diz ao servidor que você consente (ele recebe { $accept }, nada mais); o que você faz naquele site fica entre você e ele.
url-open = Abrir { $domain } numa nova aba
url-open-asks-again = (pergunta de novo)
url-not-web = Este não é um endereço da web (só links https e http são abertos).
url-invalid = Este não é um endereço da web válido.
url-finding = { $finding ->
    [hidden-characters] Este endereço contém caracteres invisíveis que mudam a forma como ele é lido; eles aparecem aqui como pontos de código (U+…). Leia-o como mostrado aqui, não como a mensagem o escreve.
    [not-https] Não é HTTPS: esta página e tudo o que você digitar nela trafegam sem criptografia.
    [internationalized-host] Este endereço usa caracteres internacionais (Punycode). Ele pode imitar um nome conhecido: compare as duas formas do host.
    [lookalike] Host parecido: sua forma Unicode imita outro nome (escritas misturadas ou letras que parecem latinas), por isso aparece na forma ASCII. Não confie no nome que ele aparenta ser.
    [credentials] Este endereço traz um nome de usuário ou senha antes do host; o host verdadeiro é a parte depois do "@".
    [ip-host] Este endereço é um endereço IP puro, não um nome.
    [no-registrable-domain] Este host não tem domínio registrável (não é um nome público da internet).
   *[local-network] Este endereço aponta para este computador ou uma rede privada, não para a internet. O que estiver escutando ali recebe os cookies deste navegador para esse host, inclusive a própria sessão do mcp-consent.
}
open-local-title = Abrir um endereço local?
open-local-heading = Abrir { $domain } para { $server }?
open-local-warning-title = Este endereço não está na internet pública.
open-local-warning-body = Ele aponta para este computador, uma rede privada ou um endereço IP puro. O que estiver escutando ali recebe os cookies deste navegador para esse host, inclusive sua sessão do mcp-consent (cookies não são separados por porta), e poderia agir em seu nome. Abra só se você mesmo iniciou esse programa e espera esta página.
open-local-consent = Abri-lo diz ao servidor que você consente (ele recebe { $accept }, nada mais).
open-local-anyway = Abrir este endereço local mesmo assim

## Confirm step

confirm-title = Confirmar
confirm-heading = { $kind ->
    [form] Enviar esta resposta de formulário para { $server }?
    [sampling] Enviar esta resposta ao pedido de modelo para { $server }?
   *[url] Enviar esta resposta de link para { $server }?
}
confirm-nothing-sent = Nada foi enviado ainda. Confira sua resposta e escolha "Enviar", ou volte para alterá-la.
confirm-exactly = "Enviar" entrega exatamente este JSON ao servidor como resposta (id JSON-RPC { $id }):
confirm-send = Enviar
confirm-back = Voltar (mantém suas respostas)

## Sampling questions

sampling-request-heading = O que o servidor quer que um modelo responda
sampling-original-note = Este é o pedido original do servidor; o prompt editado (revisão { $revision }) está na revisão abaixo.
sampling-system-prompt = Prompt de sistema
sampling-messages = Mensagens
sampling-image-alt = imagem enviada pelo servidor
sampling-image = imagem, { $mime }
sampling-audio = áudio, { $mime }
sampling-tool-result = tool_result para { $id }
sampling-hints = Dicas de modelo
sampling-none = nenhuma
sampling-priorities = Prioridades
sampling-priorities-value = custo { $cost }, velocidade { $speed }, inteligência { $intelligence }
sampling-context-ignored = (pedido e ignorado: nenhum contexto é adicionado)
sampling-tools-offered = Ferramentas oferecidas
sampling-raw-request = Pedido bruto
review-heading = Modelo
review-waiting = O servidor está esperando há { $waiting }. Revisão { $revision } do pedido.
review-routed = Encaminhado para { $model }: { $why }
review-no-model = nenhum modelo
review-no-route = Nenhuma rota permitida: nenhum modelo configurado pode atender este pedido. Edite o pedido, escreva a resposta você mesmo ou rejeite-o.
review-estimate = Entrada estimada: { $tokens } tokens ({ $method }); custo estimado em { $model } de no máximo { $cost }. Cada modelo da lista mostra sua própria estimativa; modelos excluídos pela rota não podem ser escolhidos.
review-estimate-unrouted = Entrada estimada: { $tokens } tokens ({ $method }); custo estimado no modelo da rota de no máximo { $cost }. Cada modelo da lista mostra sua própria estimativa; modelos excluídos pela rota não podem ser escolhidos.
review-run-failed = A última execução em { $model } falhou: { $error }
run-error-missing-key = a variável de ambiente { $env } com a chave de API não está definida
run-error-key-file = o arquivo da chave de API { $message }
run-error-transport = não foi possível alcançar o provedor: { $message }
run-error-timeout = o provedor não respondeu em { $seconds } segundos (o timeout_secs do modelo); o pedido foi abandonado e nada foi enviado ao servidor
run-error-incomplete = o provedor parou no meio da resposta (a conexão fechou antes de a resposta ficar completa); nada foi enviado ao servidor
run-error-too-large = a resposta do provedor passou do limite de { $bytes } bytes; a conexão foi cortada, nada da resposta foi guardado e nada foi enviado ao servidor
run-error-status = o provedor respondeu HTTP { $status }: { $message }
run-error-unparseable = resposta do provedor ilegível: { $message }
run-error-unsupported = este pedido não pode ser enviado a ele: { $message }
review-prompt-heading = O prompt que será executado
review-prompt-hint = Edite aqui se precisar: { $approve } executa exatamente o que estas caixas contêm (uma mudança é registrada como nova revisão, auditada).
review-prompt-original-above = O original do servidor está acima, em "O que o servidor quer que um modelo responda".
review-block-label = Mensagem { $message } ({ $role }), bloco { $block }
review-approve = Aprovar e executar
review-save-edits = Salvar edições sem executar
review-reject = Rejeitar
review-running = O modelo { $model } está executando. Esta página mostra a resposta dele para revisão quando terminar (recarregue se o JavaScript estiver desativado).
review-running-unnamed = O modelo está executando. Esta página mostra a resposta dele para revisão quando terminar (recarregue se o JavaScript estiver desativado).
review-answer-from = Resposta de { $model }, stopReason { $stop }, { $input } tokens de entrada e { $output } de saída, custo { $cost }. Nada foi enviado ao servidor ainda.
review-result-sent = O CreateMessageResult que "Enviar" entrega
review-send = Enviar
review-regenerate = Gerar de novo
model-select-label = Modelo a executar (custo estimado deste pedido em cada um)
model-option = { $model } — no máximo { $estimate }
model-option-excluded = { $model } — no máximo { $estimate } — não permitido: { $reason }
manual-heading = Sua resposta
manual-intro = Você responde no lugar do modelo. O servidor a recebe como um { $result } com papel assistant.
manual-text = Texto da resposta
manual-model = Nome do modelo informado ao servidor
manual-model-placeholder = por exemplo written-by-hand
manual-json-summary = Responder com um { $result } completo em JSON
manual-json-tools = (por exemplo com blocos { $tool_use })

## Routing (the receipt's reasons, rebuilt for the page)

route-why-hint-id = a dica { $name } (nº { $index }) faz parte do id do modelo
route-why-hint-alias = a dica { $name } (nº { $index }) corresponde ao apelido configurado { $alias }
route-why-hint-tie = { $why }; ela correspondeu a { $count } modelos elegíveis e este teve a maior pontuação nas prioridades
route-why-priorities = nenhuma dica correspondeu a um modelo elegível; maior pontuação de prioridades { $score } entre { $count } modelos elegíveis
route-why-hint-shared = { $why }; ela correspondeu a { $count } modelos elegíveis e { $tied } deles dividem a maior pontuação nas prioridades: { $then }
route-why-all-tied = nenhuma dica correspondeu a um modelo elegível e as prioridades não distinguem os { $count } modelos elegíveis: { $then }
route-why-some-tied = nenhuma dica correspondeu a um modelo elegível; { $tied } dos { $count } modelos elegíveis dividem a maior pontuação nas prioridades ({ $score }): { $then }
route-why-only-one = nenhuma dica correspondeu a um modelo elegível; este é o único modelo elegível
route-tie-cheaper = foi escolhido o mais barato (estimativa de no máximo { $cost })
route-tie-id = custam o mesmo, então foi escolhido o primeiro pelo id
route-why-no-models = nenhuma rota permitida: nenhum modelo está configurado
route-why-all-excluded = nenhuma rota permitida: todos os { $count } modelos configurados foram excluídos
exclusion-no-tools = o pedido usa ferramentas e este modelo não suporta ferramentas
exclusion-modality = { $modality ->
    [image] as mensagens contêm uma imagem e este modelo não aceita imagens
   *[audio] as mensagens contêm áudio e este modelo não aceita áudio
}
exclusion-over-budget = o custo estimado { $cost } passa do limite por pedido { $cap }
exclusion-server-not-allowed = o servidor { $server } não está na lista de permitidos deste modelo
token-method-chars = estimativa: caracteres / 4
spend-heading = Gasto com modelos por servidor e dia
spend-hint = Quanto as execuções de modelos custaram nos últimos { $days } dias (dias UTC), frente aos orçamentos diários de [budgets]. Toda execução conta, também uma regenerada ou rejeitada; tokens e custo são os informados pelo servidor do modelo. Na lista abaixo, os tokens e o custo de cada execução ficam na entrada que a iniciou (aprovado, regenerado); uma entrada de entrega repete os da execução que enviou.
spend-empty = Nenhum modelo foi executado nesses dias.
spend-day = Dia (UTC)
spend-runs = Execuções
spend-budget = Orçamento diário
spend-runs-value = { $runs } ({ $delivered } entregues)
spend-limit-tokens = { $used } de { $max } tokens ({ $percent }%)
spend-limit-cost = { $used } de { $max } ({ $percent }%)
spend-no-limit = sem limite diário
spend-exhausted = Atingido: o próximo pedido deste servidor hoje é recusado.
spend-unpriced = { $count } sem uso informado
spend-total = Total

## Decisions (dialogs, Escape, prompt diff, tool use)

skip-link = Pular para o conteúdo
url-decision = Abrir este endereço?
escape-reject-title = Rejeitar este pedido?
escape-decline-title = Recusar esta pergunta?
escape-reject-body = Você apertou Esc. Rejeitar avisa o servidor de que o pedido foi recusado (erro -1); nenhum texto de modelo é enviado.
escape-decline-body = Você apertou Esc. Recusar avisa o servidor de que você disse não; nada do que você digitou é enviado.
escape-keep = Continuar respondendo
diff-heading = Suas mudanças no original do servidor
diff-removed = removido:
diff-added = adicionado:
diff-unchanged = sem mudança:
diff-gap = linhas sem mudança omitidas
response-decision = Enviar esta resposta para { $server }?
tool-use-asks = { $count ->
    [one] O modelo pede para usar uma ferramenta.
   *[other] O modelo pede para usar { $count } ferramentas.
}
tool-use-nothing-runs = Nada roda a menos que você escolha Enviar.
tool-use-lets = Enviar permite que { $server } rode a ferramenta { $tool } com estes argumentos

## Sessions and notifications

nav-sessions = Sessões
login-remember = Lembrar este navegador por 30 dias
login-session-length = Uma sessão dura 12 horas; para continuar conectado neste navegador por 30 dias, marque "Lembrar este navegador" acima ou use a página Sessões depois de entrar.
sessions-title = Sessões
sessions-intro = Cada navegador conectado a este serviço. Revogar uma sessão desconecta aquele navegador na hora.
sessions-browser = Navegador
sessions-created = Criada
sessions-last-used = Último uso
sessions-this-browser = (este navegador)
sessions-revoke-others = Sair de todos os outros lugares
notify-kind-form = pede informações
notify-kind-sampling = pede para rodar um modelo
notify-kind-url = pede que você abra um link
notify-kind-tool_call = pede para chamar
notify-ask = Notificar-me neste navegador
notify-on = Este navegador mostra uma notificação quando uma pergunta chega (enquanto esta página estiver aberta).

## Audit

audit-title = Auditoria
audit-heading = Registro de auditoria
audit-hint = Cada decisão sobre qualquer tipo de pergunta, e cada regra criada ou revogada, a mais recente primeiro. Prompts, respostas e retornos são registrados só como resumos SHA-256.
audit-action = Ação
audit-any = qualquer
audit-filter = Filtrar
audit-empty = Nenhuma entrada.
audit-when = Quando
audit-actor = Autor
audit-model = Modelo
audit-tokens = Tokens
audit-cost = Custo
audit-request = Pedido
audit-response = Resposta
audit-tokens-value = { $input } entrada / { $output } saída

## Rules

rules-title = Regras de aprovação automática
rules-intro = Desativadas, a menos que você adicione uma. Uma regra deixa os pedidos ao modelo de um servidor rodarem no modelo da rota sem perguntar a você (escopo { $request }), ou também envia a resposta do modelo sem perguntar (escopo { $both }). Cada passo aprovado automaticamente fica no registro de auditoria. As regras expiram; nenhuma regra aceita uma pergunta de link ou de formulário.
rules-server = Nome do servidor
rules-covers = Abrange
rules-scope-request = o passo do pedido
rules-scope-both = os dois passos
rules-reason = Motivo
rules-add = Adicionar regra
rules-empty = Nenhuma regra.
rules-scope = Escopo
rules-by = Por
rules-created = Criada
rules-status = Situação
rules-status-active = ativa
rules-status-expired = expirada
rules-status-revoked = revogada em { $at }
rules-apply = { $count ->
    [one] Aplicar ao { $count } pedido aguardando
   *[other] Aplicar aos { $count } pedidos aguardando
}
rules-revoke = Revogar

## Problems with an answer (field messages; protocol names stay English)

problem-required = Obrigatório.
problem-not-a-string = Deve ser um texto.
problem-too-short = { $min ->
    [one] Deve ter pelo menos { $min } caractere.
   *[other] Deve ter pelo menos { $min } caracteres.
}
problem-too-long = { $max ->
    [one] Deve ter no máximo { $max } caractere.
   *[other] Deve ter no máximo { $max } caracteres.
}
problem-not-a-number = Deve ser um número.
problem-not-whole = Deve ser um número inteiro.
problem-below-minimum = Deve ser pelo menos { $min }.
problem-above-maximum = Deve ser no máximo { $max }.
problem-not-boolean = Deve ser true ou false.
problem-not-yes-no = Escolha sim, não ou sem resposta.
problem-not-an-option = “{ $value }” não é uma das opções.
problem-not-a-list = Deve ser uma lista de opções.
problem-not-a-list-of-strings = Deve ser uma lista de opções em texto.
problem-chosen-twice = Uma opção foi escolhida duas vezes.
problem-too-few-chosen = { $min ->
    [one] Escolha pelo menos { $min } opção.
   *[other] Escolha pelo menos { $min } opções.
}
problem-too-many-chosen = { $max ->
    [one] Escolha no máximo { $max } opção.
   *[other] Escolha no máximo { $max } opções.
}
problem-format = { $format ->
    [email] Deve ser um endereço de e-mail.
    [uri] Deve ser um endereço completo (URI), como https://example.com/.
    [date] Deve ser uma data (AAAA-MM-DD).
   *[date-time] Deve ser uma data e hora (RFC 3339).
}
problem-not-an-object = A resposta deve ser um objeto JSON.
problem-unknown-field = Não é um campo deste formulário.
problem-invalid-json = JSON inválido: { $detail }
problem-schema = A resposta não segue o esquema do servidor: { $detail }
problem-rule = A resposta viola uma regra do MCP: { $detail }

## Refused review steps

step-outdated = { $what ->
    [request-approval] Esta aprovação da solicitação está desatualizada: a pergunta mudou. Recarregue a página e decida de novo.
    [response-approval] Esta aprovação da resposta está desatualizada: a pergunta mudou. Recarregue a página e decida de novo.
    [edit-revision] Esta edição foi feita sobre uma revisão desatualizada: a pergunta mudou. Recarregue a página e decida de novo.
   *[approval] Esta aprovação está desatualizada: a pergunta mudou. Recarregue a página e decida de novo.
}
step-already-decided = Esta aprovação já foi decidida de outra forma. Recarregue a página para ver o que aconteceu.
step-no-route = Nenhum modelo configurado pode executar esta solicitação. Edite a solicitação, responda você mesmo ou rejeite-a.
step-unknown-model = Não há um modelo configurado “{ $model }”.
step-model-excluded = { $model } não pode executar esta solicitação (a lista de modelos diz por quê). Escolha outro modelo, edite a solicitação ou rejeite-a.
step-approval-of-another-question = Esta aprovação pertence a outra pergunta.
step-decision-does-not-fit = Esta decisão não corresponde à etapa em revisão.
step-response-decision = Uma resposta é enviada, gerada de novo ou rejeitada.
step-edit-with-decision = Uma solicitação editada só pode ser aprovada.
step-edit-needs-request-approval = Só a solicitação pode ser editada.
step-edit-base-revision = A edição foi feita na revisão { $base }, mas a aprovação é da revisão { $revision }. Recarregue a página e decida de novo.
step-no-message = A solicitação não tem a mensagem { $message }.
step-no-block = A mensagem { $message } não tem o bloco { $block }.
step-block-not-text = O bloco { $block } da mensagem { $message } não é texto.
step-edit-invalid = A solicitação editada não é válida: { $detail }
step-rule-scope = Escolha o que a regra cobre: a etapa da solicitação ou as duas etapas.
step-rule-needs-reason = Uma regra precisa de um nome de servidor e de um motivo.

## Staying signed in

session-day-notice = Você está conectado por 12 horas neste navegador.

## Desktop notifications (server name and kind only)

notification-question = { $kind ->
    [sampling] { $server } pede para rodar um modelo
    [url] { $server } pede que você abra um link
    [tool_call] { $server } pede para chamar { $tool }
   *[form] { $server } pede informações
}
notification-waiting = { $count ->
    [one] { $count } pergunta está esperando
   *[other] { $count } perguntas estão esperando
}

## Tool calls

tool-heading = { $server } quer chamar { $tool }
tool-intro = Suas regras pedem que você decida sobre esta chamada. O servidor só a recebe se você permitir, e então exatamente como mostrada (ou como você a editar).
tool-description = O que o servidor diz que a ferramenta faz
tool-annotations = O que o servidor afirma sobre a ferramenta
tool-claims-note = São afirmações do servidor, não verificadas pelo mcp-consent.
question-opened-over-tcp = Esta pergunta chegou pela rede com o token da API, não de um proxy neste computador. Um proxy iniciado com --broker pergunta assim, e também qualquer pessoa que tenha o token, com o nome de qualquer servidor. Responda, sobretudo com um segredo, só se você espera um proxy assim.
tool-opened-over-tcp = Esta chamada chegou pela rede com o token da API, não de um proxy neste computador. Um proxy iniciado com --broker envia suas chamadas assim, e também qualquer pessoa que tenha o token. Permita-a, e sobretudo conceda qualquer permissão, só se você espera um proxy assim.
tool-arguments = Argumentos
tool-no-arguments = Sem argumentos.
tool-edit = Editar os argumentos (JSON)
tool-edit-help = Enviar estes argumentos no lugar. Eles são verificados contra o esquema de entrada da ferramenta.
tool-no-schema = O mcp-consent não viu o esquema de entrada desta ferramenta (o host não listou as ferramentas por este proxy), então qualquer objeto JSON é aceito.
tool-allow-once = Permitir uma vez
tool-decline = Recusar
tool-grant-legend = Ou permitir esta ferramenta neste servidor a partir de agora
tool-grant-hour = Permitir por uma hora
tool-grant-day = Permitir por um dia
tool-grant-always = Sempre permitir
tool-grant-note = Uma permissão responde esta chamada e as chamadas em espera desta ferramenta de uma vez; revogue-a na página de regras.
tool-grants-title = Permissões de ferramentas
tool-grants-intro = Permissões feitas em perguntas de chamada de ferramenta. Cada uma deixa uma ferramenta de um servidor rodar sem perguntar, até expirar ou você revogar. Uma regra que nega uma chamada continua negando.
tool-grants-empty = Nenhuma permissão de ferramenta.
tool-grant-expires = Expira
tool-grant-never = nunca (até revogar)
tool-grant-revoked = revogada
tool-grant-revoke = Revogar
tool-preview = chama { $tool }

## Páginas de pergunta: avisos que protegem, uma decisão por vez

url-warnings-title = Atenção: este endereço pode não ser o que parece.
url-hidden-char = Um caractere invisível, mostrado pelo seu ponto de código
tool-argument-hidden = Este valor contém caracteres invisíveis que podem mudar a forma como ele se lê; eles aparecem como pontos de código (U+…). Leia-o como aparece aqui.
url-warning-imitates = Este não é { $known }: { $domain } só se parece com ele, com letras parecidas. Voltar é a escolha segura.
url-warning-posing = O endereço começa com { $known }, mas pertence a { $domain }: é esse site, e não { $known }, que recebe o que você digitar lá.
url-warning-brand = A mensagem cita { $brand }, mas este endereço não está em { $known }: ele pertence a { $domain }.
url-decline-safe = Não abrir: recusar
url-open-anyway = Abrir { $domain } mesmo assim
role = { $word ->
    [user] usuário
   *[assistant] assistente
}
review-block-fixed = Um bloco { $kind }: mostrado no pedido acima, enviado como está (não editável aqui).
review-block-fixed-id = Um bloco { $kind }, id { $id }: mostrado no pedido acima, enviado como está (não editável aqui).
question-heading-done = { $kind ->
    [sampling] { $server } pediu uma resposta de modelo
    [form] { $server } pediu sua resposta
   *[url] { $server } pediu que você abrisse um link
}
lead-tool = Durante a chamada de ferramenta { $tool }
lead-asked = perguntado { $when }
lead-expires = expira { $when }
deadline-last-minute = Falta menos de um minuto: responda agora, ou esta pergunta expira e nada do que você digitar poderá ser enviado.
deadline-passed = Esta pergunta expirou: nada mais pode ser enviado. O que você digitou continua nesta página para você copiar.
meta-details = Detalhes
outcome-when = { $state ->
    [accepted] { $kind ->
        [url] Você abriu o link às { $time }; { $server } foi avisado do seu consentimento.
       *[other] Enviado a { $server } às { $time }.
    }
    [declined] Recusado às { $time }; { $server } foi avisado de que você disse não.
    [cancelled] Cancelado às { $time }; { $server } foi avisado.
    [expired] Expirou às { $time }: ninguém respondeu a tempo; { $server } foi avisado.
    [withdrawn] { $server } retirou esta pergunta às { $time }.
   *[completed] { $server } informou a conclusão às { $time }.
}
outcome-next = { $kind ->
    [sampling] Próxima: { $server } pede uma resposta de modelo
    [form] Próxima: { $server } pede sua resposta
   *[url] Próxima: { $server } pede que você abra um link
}
outcome-more-waiting = { $count ->
    [one] e mais 1 esperando
   *[other] e mais { $count } esperando
}
outcome-none-waiting = Nenhuma outra pergunta está esperando.
outcome-back-to-queue = Voltar para a fila
step-request = Passo 1 de 2: confira o prompt e o modelo e aprove uma execução. Nada foi enviado ao servidor.
step-running-hint = Nada foi enviado ao servidor. A resposta vem para cá para você revisar; então você decide se ela é enviada.
step-response = Passo 2 de 2: a resposta está pronta. Confira e envie ao servidor, ou rejeite.
regenerate-legend = Ou execute o pedido de novo
model-regenerate-label = Modelo para Gerar de novo (custo estimado deste pedido em cada um)
model-option-over-cap = { $model } — no máximo { $estimate } — acima do limite de custo (pede confirmação)
manual-choice = Responder sem modelo…
sampling-original-note-done = Este é o pedido original do servidor; o prompt editado que foi executado (revisão { $revision }) fica guardado abaixo.
done-heading = O que foi executado
done-edited-prompt = O prompt editado que foi executado (revisão { $revision })
over-cap-title = Acima do limite de custo
over-cap-heading = Executar { $model } acima do limite de custo?
over-cap-body = Este pedido tem custo estimado de até { $cost } em { $model }, mais que o limite de { $cap } por pedido. O modelo só é executado se você confirmar; a resposta ainda volta para sua revisão antes de qualquer envio.
over-cap-for = O pedido é de { $server }.
over-cap-back = Voltar, ficar dentro do limite
over-cap-run = Executar { $model } mesmo assim (até { $cost })
login-session-length-no-box = Uma sessão dura 12 horas; para continuar conectado neste navegador por 30 dias, use a página Sessões depois de entrar.
