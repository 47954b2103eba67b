package telegram

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
)

// Approval is one Host approval question, as the user sees it.
type Approval struct {
	Summary, Tool, Risk, Capability, Action, Target string
	Command                                         string // the command of a terminal call ("" for none)
	Arguments                                       string // a JSON preview of the arguments ("" for none)
}

// Answers to an approval question.
const (
	AllowOnce    = "allow"
	AllowSession = "session"
	Deny         = "deny"
)

type pendingApproval struct {
	chatID, userID int64
	q              Approval
	answer         chan string // buffered: the one answer
}

// groupApproval is the answer to a question asked in a group chat.
const groupApproval = "Telegram approval is only supported in private chat. Please retry from a private chat with this bot."

// Ask puts q to the user whose message to is, in their private chat, and
// waits for the answer (AllowOnce, AllowSession or Deny). It denies when
// the chat is a group, when ApprovalTimeout passes, and when ctx ends (the
// turn stopped); an error sending the question is returned with Deny.
func (c *Channel) Ask(ctx context.Context, to demiurge.Inbound, q Approval) (string, error) {
	chatID, err := strconv.ParseInt(to.Source, 10, 64)
	if err != nil {
		return Deny, demiurge.Errorf(demiurge.EINVALID, "telegram approval has no chat id")
	}
	if t, _ := to.Metadata["telegram_chat_type"].(string); t != "" && t != "private" {
		_, _ = c.sendText(ctx, chatID, groupApproval, 0, "", false)
		return Deny, nil
	}
	uid, _ := to.Metadata["telegram_user_id"].(string)
	userID, err := strconv.ParseInt(uid, 10, 64)
	if err != nil || !c.authorized(userID, chatID, false) {
		return Deny, demiurge.Errorf(demiurge.EUNAUTHORIZED, "telegram approval has no allowed user to ask")
	}
	c.mu.Lock()
	c.nextID++
	id := strconv.Itoa(c.nextID)
	p := &pendingApproval{chatID: chatID, userID: userID, q: q, answer: make(chan string, 1)}
	c.approvals[id] = p
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.approvals, id)
		c.mu.Unlock()
	}
	mdv2 := c.cfg.MessageFormat == "markdown_v2"
	msgID, err := c.sendText(ctx, chatID, approvalText(q), 0, keyboard(
		[]inlineButton{{Text: "Allow once", CallbackData: "approval:" + id + ":allow"}},
		[]inlineButton{{Text: "Allow for session", CallbackData: "approval:" + id + ":session"}},
		[]inlineButton{{Text: "Deny", CallbackData: "approval:" + id + ":deny"}},
	), mdv2)
	if err != nil {
		forget()
		return Deny, coded(err)
	}
	timer := time.NewTimer(c.cfg.ApprovalTimeout)
	defer timer.Stop()
	select {
	case a := <-p.answer:
		return a, nil
	case <-timer.C:
		forget()
		c.edit(context.WithoutCancel(ctx), chatID, msgID, "## Approval expired\n\nRequest denied after "+minutes(c.cfg.ApprovalTimeout)+".")
		return Deny, nil
	case <-ctx.Done():
		forget()
		ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		c.edit(ectx, chatID, msgID, "## Approval expired\n\nThe turn was stopped before approval.")
		return Deny, nil
	}
}

func minutes(d time.Duration) string {
	if d >= time.Minute && d%time.Minute == 0 {
		return strconv.Itoa(int(d/time.Minute)) + " minutes"
	}
	return d.String()
}

// callback answers one callback query (an approval button).
func (c *Channel) callback(ctx context.Context, q *callbackQuery) {
	answer := func(text string) {
		params := url.Values{"callback_query_id": {q.ID}}
		if text != "" {
			params.Set("text", text)
		}
		_ = c.api.call(ctx, "answerCallbackQuery", params, nil)
	}
	if !slices.Contains(c.cfg.AllowedUsers, q.From.ID) {
		answer("Telegram access denied.")
		return
	}
	rest, ok := strings.CutPrefix(q.Data, "approval:")
	if !ok {
		c.ignored.Add(1)
		answer("")
		return
	}
	id, action, ok := strings.Cut(rest, ":")
	if !ok || id == "" || strings.Contains(action, ":") || (action != AllowOnce && action != AllowSession && action != Deny) {
		answer("Invalid approval action.")
		return
	}
	c.mu.Lock()
	p := c.approvals[id]
	if p != nil && p.userID != q.From.ID {
		c.mu.Unlock()
		answer("Telegram access denied.") // only the user who was asked may answer
		return
	}
	delete(c.approvals, id)
	c.mu.Unlock()
	if p == nil {
		answer("Approval expired.")
		if q.Message != nil {
			c.edit(ctx, q.Message.Chat.ID, q.Message.MessageID, "## Approval expired\n\nThis approval has already been resolved.")
		}
		return
	}
	p.answer <- action
	title, detail, reply := "Denied", "The command was not executed.", "Denied."
	switch action {
	case AllowOnce:
		title, detail, reply = "Approved once", "The command was approved for this request.", "Approved."
	case AllowSession:
		title, detail, reply = "Approved for session", "Matching requests are allowed for this session.", "Approved."
	}
	answer(reply)
	if q.Message != nil {
		text := "## " + title + "\n\n" + detail + "\n\n**Summary:** " + p.q.Summary + "\n**Tool:** `" + p.q.Tool + "`"
		if p.q.Command != "" {
			text += "\n\n**Command**\n```\n" + shorten(p.q.Command, 1000) + "\n```"
		}
		c.edit(ctx, q.Message.Chat.ID, q.Message.MessageID, text)
	}
}

// edit replaces a message's text (its keyboard goes with it).
func (c *Channel) edit(ctx context.Context, chatID, messageID int64, text string) {
	if messageID == 0 {
		return
	}
	mdv2 := c.cfg.MessageFormat == "markdown_v2"
	params := url.Values{"chat_id": {strconv.FormatInt(chatID, 10)}, "message_id": {strconv.FormatInt(messageID, 10)}, "text": {text}}
	if mdv2 {
		params.Set("text", FormatMarkdownV2(text))
		params.Set("parse_mode", "MarkdownV2")
	}
	if err := c.api.call(ctx, "editMessageText", params, nil); err != nil {
		c.cfg.Logger.Warn("telegram editMessageText", "channel", c.cfg.Name, "err", err.Error())
	}
}

// approvalText is the question (spec §3.8.8 format_approval_request_text).
func approvalText(q Approval) string {
	var b strings.Builder
	b.WriteString("## Approval required\n\n")
	b.WriteString("**Summary:** " + q.Summary + "\n")
	b.WriteString("**Tool:** `" + q.Tool + "`\n")
	b.WriteString("**Risk:** `" + q.Risk + "`\n")
	b.WriteString("**Capability:** `" + q.Capability + "`\n")
	b.WriteString("**Action:** `" + q.Action + "`")
	if q.Target != "" {
		b.WriteString("\n**Target:** `" + q.Target + "`")
	}
	if q.Command != "" {
		b.WriteString("\n\n**Command**\n```\n" + shorten(q.Command, 1000) + "\n```")
	}
	if q.Arguments != "" {
		b.WriteString("\n\n**Arguments**\n```json\n" + shorten(q.Arguments, 1000) + "\n```")
	}
	b.WriteString("\n\nThis request expires in 10 minutes.\nChoose **Allow once**, **Allow for session**, or **Deny**.")
	return b.String()
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}
