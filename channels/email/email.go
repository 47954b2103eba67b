// Package email is the email channel (spec surfaces §3.13): new mail in an
// IMAP folder becomes inbound messages, replies go out over SMTP, threaded
// with In-Reply-To and References. It is an adapter (a leaf) over
// github.com/emersion/go-imap/v2 (client) and github.com/emersion/go-smtp.
//
// # Inbound
//
// Run connects (IMAP over TLS on port 993, else STARTTLS: a login never
// crosses the network in the clear), logs in, selects the mailbox and, every
// poll interval, searches UNSEEN mail, fetches each message with
// BODY.PEEK[] (not marking it), and accepts the batch into the inbox; only
// after the commit are the messages flagged \Seen, so a crash re-reads
// them and the inbox (keyed by Message-ID) admits each once. Mail is
// denied by default: only senders in allowed_senders are admitted (which
// needs trust_from_headers: true, because From headers are spoofable);
// other mail, and mail without a text/plain body, is flagged \Seen and
// ignored. A dropped connection ends the run with its error, and the
// gateway reconnects after its backoff.
//
// # Outbound
//
// Send mails a plain-text reply to the sender (who must be in a non-empty
// allowed_recipients), subject "Re: <subject>" (or "Re: Demiurge
// response"), In-Reply-To the original Message-ID and References its
// References plus that id, over SMTP with implicit TLS (port 465) or
// STARTTLS, authenticated with PLAIN.
package email

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/demiurge/demiurge"
)

// Inbox is what the channel hands accepted mail to: Accept returns once
// it is committed.
type Inbox interface {
	Accept(ctx context.Context, envs []demiurge.InboundEnvelope, cursor string) ([]demiurge.InboxReceipt, error)
}

// Limits.
const (
	MaxMessageBytes = 4 << 20 // a larger message is ignored (flagged \Seen)
	batch           = 50
	netTimeout      = 30 * time.Second
)

// Config configures one email channel.
type Config struct {
	Name string

	IMAPHost     string
	IMAPPort     int // 993: TLS; anything else: STARTTLS
	IMAPUsername string
	IMAPPassword string
	Mailbox      string

	SMTPHost     string
	SMTPPort     int // 465: TLS; anything else: STARTTLS
	SMTPStartTLS bool
	SMTPUsername string
	SMTPPassword string
	FromAddress  string

	AllowedSenders    []string
	AllowedRecipients []string
	TrustFromHeaders  bool
	PollInterval      time.Duration

	// TLS is the client TLS configuration (tests trust their own
	// certificate authority); ServerName is set per server.
	TLS    *tls.Config
	Logger *slog.Logger
}

// Channel is one mailbox. It is safe for concurrent use.
type Channel struct {
	cfg      Config
	senders  []string
	rcpts    []string
	from     string
	fromHost string
}

// New checks cfg (the spec's messages, ECONFIG) and returns the channel.
func New(cfg Config) (*Channel, error) {
	switch {
	case cfg.SMTPHost == "" || cfg.IMAPHost == "":
		return nil, demiurge.Errorf(demiurge.ECONFIG, "email channel requires smtp_host and imap_host")
	case cfg.SMTPUsername == "" || cfg.SMTPPassword == "":
		return nil, demiurge.Errorf(demiurge.ECONFIG, "email channel requires SMTP username/password env values or inline credentials")
	case cfg.IMAPUsername == "" || cfg.IMAPPassword == "":
		return nil, demiurge.Errorf(demiurge.ECONFIG, "email channel requires IMAP username/password env values or inline credentials")
	case len(cfg.AllowedSenders) == 0:
		return nil, demiurge.Errorf(demiurge.ECONFIG, "email channel requires allowed_senders: mail from anyone else is denied")
	case !cfg.TrustFromHeaders:
		return nil, demiurge.Errorf(demiurge.ECONFIG, "email allowed_senders requires trust_from_headers: true because RFC5322 From headers are spoofable")
	case cfg.SMTPPort != 465 && !cfg.SMTPStartTLS:
		return nil, demiurge.Errorf(demiurge.ECONFIG, "email channel sends its SMTP password only over TLS: set smtp_starttls: true or use port 465")
	}
	if cfg.Mailbox == "" {
		cfg.Mailbox = "INBOX"
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Channel{cfg: cfg}
	for _, s := range cfg.AllowedSenders {
		c.senders = append(c.senders, normalize(s))
	}
	for _, s := range cfg.AllowedRecipients {
		c.rcpts = append(c.rcpts, normalize(s))
	}
	c.from = cmpOr(cfg.FromAddress, cfg.SMTPUsername, cfg.IMAPUsername)
	addr, err := mail.ParseAddress(c.from)
	if err != nil {
		return nil, demiurge.Errorf(demiurge.ECONFIG, "email channel requires from_address (or an SMTP username) that is an address")
	}
	c.from = addr.Address
	if _, host, ok := strings.Cut(c.from, "@"); ok {
		c.fromHost = host
	}
	return c, nil
}

func cmpOr(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// normalize is an address's comparable form: the address part, lower case.
func normalize(s string) string {
	if a, err := mail.ParseAddress(s); err == nil {
		return strings.ToLower(a.Address)
	}
	return strings.ToLower(strings.TrimSpace(s))
}

func (c *Channel) tlsConfig(host string) *tls.Config {
	t := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.cfg.TLS != nil {
		t = c.cfg.TLS.Clone()
	}
	t.ServerName = host
	return t
}

// Run polls the mailbox until ctx ends (nil) or the connection fails.
func (c *Channel) Run(ctx context.Context, inbox Inbox) error {
	addr := net.JoinHostPort(c.cfg.IMAPHost, fmt.Sprint(c.cfg.IMAPPort))
	opts := &imapclient.Options{TLSConfig: c.tlsConfig(c.cfg.IMAPHost), Dialer: &net.Dialer{Timeout: netTimeout}}
	var cl *imapclient.Client
	var err error
	if c.cfg.IMAPPort == 993 {
		cl, err = imapclient.DialTLS(addr, opts)
	} else {
		cl, err = imapclient.DialStartTLS(addr, opts)
	}
	if err != nil {
		return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "email channel %s cannot reach IMAP %s: %s", c.cfg.Name, addr, reason(err))
	}
	defer cl.Close()
	stop := context.AfterFunc(ctx, func() { cl.Close() })
	defer stop()
	if err := cl.Login(c.cfg.IMAPUsername, c.cfg.IMAPPassword).Wait(); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "email channel %s: IMAP login failed", c.cfg.Name)
	}
	if _, err := cl.Select(c.cfg.Mailbox, nil).Wait(); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "email channel %s: cannot select mailbox %q", c.cfg.Name, c.cfg.Mailbox)
	}
	for {
		if err := c.pollOnce(ctx, cl, inbox); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		t := time.NewTimer(c.cfg.PollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			_ = cl.Logout().Wait()
			return nil
		case <-cl.Closed():
			t.Stop()
			if ctx.Err() != nil {
				return nil
			}
			return demiurge.Errorf(demiurge.EUNAVAILABLE, "email channel %s: the IMAP server closed the connection", c.cfg.Name)
		case <-t.C:
		}
	}
}

func reason(err error) string {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Op + " failed"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timed out"
	}
	return "connection failed"
}

// pollOnce accepts the unseen mail, then flags it \Seen.
func (c *Channel) pollOnce(ctx context.Context, cl *imapclient.Client, inbox Inbox) error {
	if err := cl.Noop().Wait(); err != nil {
		return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "email channel %s: IMAP NOOP failed", c.cfg.Name)
	}
	data, err := cl.UIDSearch(&imap.SearchCriteria{NotFlag: []imap.Flag{imap.FlagSeen}}, nil).Wait()
	if err != nil {
		return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "email channel %s: IMAP search failed", c.cfg.Name)
	}
	uids := data.AllUIDs()
	if len(uids) == 0 {
		return nil
	}
	if len(uids) > batch {
		uids = uids[:batch]
	}
	set := imap.UIDSetNum(uids...)
	section := &imap.FetchItemBodySection{Peek: true}
	msgs, err := cl.Fetch(set, &imap.FetchOptions{UID: true, RFC822Size: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
	if err != nil {
		return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "email channel %s: IMAP fetch failed", c.cfg.Name)
	}
	var envs []demiurge.InboundEnvelope
	for _, m := range msgs {
		raw := m.FindBodySection(section)
		if raw == nil || m.RFC822Size > MaxMessageBytes {
			continue
		}
		if env, ok := c.envelope(m.UID, raw); ok {
			envs = append(envs, env)
		}
	}
	if _, err := inbox.Accept(ctx, envs, ""); err != nil {
		return err // nothing flagged: read again next time
	}
	if err := cl.Store(set, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagSeen}}, nil).Close(); err != nil {
		return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "email channel %s: IMAP store failed", c.cfg.Name)
	}
	return nil
}

// envelope parses one message; ok is false for mail that is not admitted.
func (c *Channel) envelope(uid imap.UID, raw []byte) (demiurge.InboundEnvelope, bool) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return demiurge.InboundEnvelope{}, false
	}
	from, err := mail.ParseAddress(msg.Header.Get("From"))
	if err != nil {
		return demiurge.InboundEnvelope{}, false
	}
	sender := strings.ToLower(from.Address)
	if !slices.Contains(c.senders, sender) {
		c.cfg.Logger.Info("email from a sender not allowed", "channel", c.cfg.Name)
		return demiurge.InboundEnvelope{}, false
	}
	text := strings.TrimSpace(plainText(msg))
	if text == "" {
		return demiurge.InboundEnvelope{}, false
	}
	dec := new(mime.WordDecoder)
	subject, err := dec.DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		subject = msg.Header.Get("Subject")
	}
	msgID := strings.TrimSpace(msg.Header.Get("Message-Id"))
	key := "message-id:" + msgID
	if msgID == "" {
		key = fmt.Sprintf("uid:%d", uid)
	}
	return demiurge.InboundEnvelope{
		EventKey: key, ConversationKey: "email:sender:" + demiurge.PercentEncode(sender), PrincipalKey: "email:sender:" + demiurge.PercentEncode(sender),
		Source: sender, ReplyTo: cmpOr(msgID, fmt.Sprint(uid)), Text: text,
		Metadata: map[string]any{"email_sender": sender, "email_subject": oneLine(subject), "email_message_id": msgID,
			"email_references": strings.Join(strings.Fields(msg.Header.Get("References")), " ")},
	}, true
}

// plainText is the first text/plain part that is not an attachment.
func plainText(msg *mail.Message) string {
	return partText(msg.Header, msg.Body, 0)
}

// header is what partText reads of a message's or a part's header.
type header interface{ Get(string) string }

func partText(h header, body io.Reader, depth int) string {
	media, params, err := mime.ParseMediaType(cmpOr(h.Get("Content-Type"), "text/plain"))
	if err != nil || depth > 5 {
		return ""
	}
	if disp, _, _ := mime.ParseMediaType(h.Get("Content-Disposition")); disp == "attachment" {
		return ""
	}
	if strings.HasPrefix(media, "multipart/") {
		r := multipart.NewReader(body, params["boundary"])
		for {
			p, err := r.NextPart()
			if err != nil {
				return ""
			}
			if t := partText(p.Header, p, depth+1); t != "" {
				return t
			}
		}
	}
	if media != "text/plain" {
		return ""
	}
	var rd io.Reader = body
	switch strings.ToLower(h.Get("Content-Transfer-Encoding")) {
	case "base64":
		rd = base64.NewDecoder(base64.StdEncoding, stripNewlines{body})
	case "quoted-printable":
		rd = quotedprintable.NewReader(body)
	}
	b, err := io.ReadAll(io.LimitReader(rd, MaxMessageBytes))
	if err != nil {
		return ""
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// stripNewlines drops CR and LF from a base64 body.
type stripNewlines struct{ r io.Reader }

func (s stripNewlines) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	j := 0
	for _, b := range p[:n] {
		if b != '\r' && b != '\n' {
			p[j] = b
			j++
		}
	}
	return j, err
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// AllowsTarget reports whether a schedule may mail to address.
func (c *Channel) AllowsTarget(address string) bool {
	return len(c.rcpts) == 0 || slices.Contains(c.rcpts, normalize(address))
}

// Send mails out as the reply to the message to.
func (c *Channel) Send(ctx context.Context, to demiurge.Inbound, out demiurge.Outbound) error {
	text := strings.TrimSpace(out.Text)
	if text == "" {
		return nil
	}
	rcpt, _ := to.Metadata["email_sender"].(string)
	rcpt = normalize(cmpOr(rcpt, to.Source))
	if _, err := mail.ParseAddress(rcpt); err != nil {
		return demiurge.Errorf(demiurge.EINVALID, "email delivery has no recipient address")
	}
	if len(c.rcpts) > 0 && !slices.Contains(c.rcpts, rcpt) {
		return demiurge.Errorf(demiurge.EINVALID, "email delivery recipient is not allowed")
	}
	subject, _ := to.Metadata["email_subject"].(string)
	subject = oneLine(cmpOr(subject, "Demiurge response"))
	if !strings.HasPrefix(strings.ToLower(subject), "re:") {
		subject = "Re: " + subject
	}
	orig, _ := to.Metadata["email_message_id"].(string)
	refs, _ := to.Metadata["email_references"].(string)
	body, err := c.compose(rcpt, subject, oneLine(orig), strings.Fields(refs), text)
	if err != nil {
		return err
	}
	return c.smtpSend(ctx, rcpt, body)
}

func (c *Channel) compose(rcpt, subject, inReplyTo string, refs []string, text string) ([]byte, error) {
	var id [12]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	fmt.Fprintf(w, "From: %s\r\n", (&mail.Address{Address: c.from}).String())
	fmt.Fprintf(w, "To: %s\r\n", (&mail.Address{Address: rcpt}).String())
	fmt.Fprintf(w, "Subject: %s\r\n", mime.QEncoding.Encode("utf-8", subject))
	fmt.Fprintf(w, "Date: %s\r\n", time.Now().UTC().Format(time.RFC1123Z))
	fmt.Fprintf(w, "Message-ID: <demiurge.%s@%s>\r\n", hex.EncodeToString(id[:]), cmpOr(c.fromHost, "localhost"))
	if inReplyTo != "" {
		fmt.Fprintf(w, "In-Reply-To: %s\r\n", inReplyTo)
		refs = append(refs, inReplyTo)
	}
	if len(refs) > 0 {
		fmt.Fprintf(w, "References: %s\r\n", strings.Join(slices.Compact(refs), " "))
	}
	fmt.Fprint(w, "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n")
	qp := quotedprintable.NewWriter(w)
	if _, err := qp.Write([]byte(strings.ReplaceAll(text, "\n", "\r\n"))); err != nil {
		return nil, err
	}
	qp.Close()
	w.Flush()
	return b.Bytes(), nil
}

func (c *Channel) smtpSend(ctx context.Context, rcpt string, body []byte) error {
	addr := net.JoinHostPort(c.cfg.SMTPHost, fmt.Sprint(c.cfg.SMTPPort))
	d := net.Dialer{Timeout: netTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "email channel %s cannot reach SMTP %s: %s", c.cfg.Name, addr, reason(err))
	}
	deadline := time.Now().Add(netTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	var cl *smtp.Client
	if c.cfg.SMTPPort == 465 {
		cl = smtp.NewClient(tls.Client(conn, c.tlsConfig(c.cfg.SMTPHost)))
	} else if cl, err = smtp.NewClientStartTLS(conn, c.tlsConfig(c.cfg.SMTPHost)); err != nil {
		conn.Close()
		return demiurge.WrapError(demiurge.EUNAVAILABLE, err, "email channel %s: SMTP STARTTLS failed", c.cfg.Name)
	}
	defer cl.Close()
	if err := cl.Auth(sasl.NewPlainClient("", c.cfg.SMTPUsername, c.cfg.SMTPPassword)); err != nil {
		return smtpError(err, "SMTP login failed")
	}
	if err := cl.SendMail(c.from, []string{rcpt}, bytes.NewReader(body)); err != nil {
		return smtpError(err, "SMTP refused the reply")
	}
	_ = cl.Quit()
	return nil
}

// smtpError: a 4xx reply asks for a later attempt (EUNAVAILABLE); the rest
// is final.
func smtpError(err error, msg string) error {
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		code := demiurge.EINVALID
		if se.Code >= 400 && se.Code < 500 {
			code = demiurge.EUNAVAILABLE
		}
		return demiurge.WrapError(code, err, "%s (%d %s)", msg, se.Code, oneLine(se.Message))
	}
	return demiurge.WrapError(demiurge.EINTERNAL, err, "%s", msg)
}
