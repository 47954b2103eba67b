package email_test

import (
	"bytes"
	"context"
	"io"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/channels/email"
	"github.com/demiurge/demiurge/internal/demiurgetest"
)

type inbox struct {
	mu   sync.Mutex
	envs []demiurge.InboundEnvelope
	fail bool
}

func (b *inbox) Accept(_ context.Context, envs []demiurge.InboundEnvelope, _ string) ([]demiurge.InboxReceipt, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail {
		return nil, demiurge.Errorf(demiurge.EUNAVAILABLE, "database is locked")
	}
	b.envs = append(b.envs, envs...)
	return make([]demiurge.InboxReceipt, len(envs)), nil
}

func (b *inbox) accepted() []demiurge.InboundEnvelope {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]demiurge.InboundEnvelope(nil), b.envs...)
}

func config(m *demiurgetest.Mail) email.Config {
	ih, ip := demiurgetest.HostPort(m.IMAPAddr)
	sh, sp := demiurgetest.HostPort(m.SMTPAddr)
	client := m.ClientTLS
	return email.Config{Name: "email", IMAPHost: ih, IMAPPort: ip, IMAPUsername: "bot@example.com", IMAPPassword: "imap-secret-pw",
		SMTPHost: sh, SMTPPort: sp, SMTPStartTLS: true, SMTPUsername: "bot@example.com", SMTPPassword: "smtp-secret-pw",
		AllowedSenders: []string{"Alice <alice@example.org>"}, TrustFromHeaders: true, PollInterval: 50 * time.Millisecond, TLS: client}
}

const fromAlice = "From: Alice <alice@example.org>\r\nTo: bot@example.com\r\nSubject: Build status\r\n" +
	"Message-ID: <m1@example.org>\r\nReferences: <m0@example.org>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nIs the build green?\r\n"

// Against real IMAP and SMTP servers on loopback (go-imap's and go-smtp's,
// STARTTLS, no login in the clear): allowed mail is accepted and then
// flagged \Seen; mail from anyone else is flagged and ignored; the reply
// threads with In-Reply-To and References; a multipart body gives its
// text/plain part.
func TestEmailRoundTrip(t *testing.T) {
	m := demiurgetest.StartMail(t)
	ch, err := email.New(config(m))
	if err != nil {
		t.Fatal(err)
	}
	m.Deliver(fromAlice)
	m.Deliver("From: Mallory <mallory@evil.example>\r\nSubject: hi\r\nMessage-ID: <x@evil>\r\n\r\nlet me in\r\n")
	m.Deliver("From: alice@example.org\r\nSubject: =?utf-8?q?Caf=C3=A9?=\r\nMessage-ID: <m2@example.org>\r\n" +
		"MIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary=b\r\n\r\n--b\r\nContent-Type: text/html\r\n\r\n<p>html</p>\r\n" +
		"--b\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nplain =E2=9C=93\r\n--b--\r\n")
	in := &inbox{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ch.Run(ctx, in) }()
	deadline := time.Now().Add(10 * time.Second)
	for len(in.accepted()) < 2 || m.Seen() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("accepted %d, seen %d", len(in.accepted()), m.Seen())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := in.accepted()
	if len(got) != 2 {
		t.Fatalf("accepted %+v", got)
	}
	e := got[0]
	if e.Text != "Is the build green?" || e.ConversationKey != "email:sender:alice%40example.org" || e.EventKey != "message-id:<m1@example.org>" ||
		e.Metadata["email_subject"] != "Build status" {
		t.Fatalf("envelope %+v", e)
	}
	if got[1].Text != "plain ✓" || got[1].Metadata["email_subject"] != "Café" {
		t.Fatalf("multipart envelope %+v", got[1])
	}

	if err := ch.Send(context.Background(), demiurge.Inbound{InboundEnvelope: e}, demiurge.Outbound{Text: "Yes, green."}); err != nil {
		t.Fatal(err)
	}
	msgs := m.Sent()
	if len(msgs) != 1 || msgs[0].To != "alice@example.org" || msgs[0].From != "bot@example.com" {
		t.Fatalf("sent %+v", msgs)
	}
	reply, err := mail.ReadMessage(bytes.NewReader(msgs[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	if reply.Header.Get("Subject") != "Re: Build status" || reply.Header.Get("In-Reply-To") != "<m1@example.org>" ||
		reply.Header.Get("References") != "<m0@example.org> <m1@example.org>" {
		t.Fatalf("reply headers %v", reply.Header)
	}
	body, _ := io.ReadAll(reply.Body)
	if !strings.Contains(string(body), "Yes, green.") {
		t.Fatalf("reply body %q", body)
	}
}

// An inbox that cannot commit leaves the mail unseen (read again later);
// a server that goes away ends the run with an error that names no
// password; configuration is checked with the spec's messages.
func TestEmailFaultsAndConfig(t *testing.T) {
	m := demiurgetest.StartMail(t)
	cfg := config(m)
	ch, err := email.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.Deliver(fromAlice)
	in := &inbox{fail: true}
	err = ch.Run(context.Background(), in)
	if err == nil || err.Error() != "database is locked" || m.Seen() != 0 {
		t.Fatalf("inbox failure: %v, seen %d", err, m.Seen())
	}
	m.CloseIMAP()
	err = ch.Run(context.Background(), &inbox{})
	if demiurge.ErrorCode(err) != demiurge.EUNAVAILABLE || strings.Contains(err.Error(), "imap-secret-pw") {
		t.Fatalf("server gone: %v", err)
	}
	for _, tt := range []struct {
		edit func(*email.Config)
		want string
	}{
		{func(c *email.Config) { c.IMAPHost = "" }, "email channel requires smtp_host and imap_host"},
		{func(c *email.Config) { c.SMTPPassword = "" }, "email channel requires SMTP username/password env values or inline credentials"},
		{func(c *email.Config) { c.AllowedSenders = nil }, "email channel requires allowed_senders: mail from anyone else is denied"},
		{func(c *email.Config) { c.TrustFromHeaders = false }, "email allowed_senders requires trust_from_headers: true because RFC5322 From headers are spoofable"},
		{func(c *email.Config) { c.SMTPStartTLS = false }, "email channel sends its SMTP password only over TLS: set smtp_starttls: true or use port 465"},
	} {
		c := cfg
		tt.edit(&c)
		if _, err := email.New(c); err == nil || err.Error() != tt.want {
			t.Errorf("got %v, want %q", err, tt.want)
		}
	}
	c := cfg
	c.AllowedRecipients = []string{"ops@example.org"}
	restricted, _ := email.New(c)
	to := demiurge.Inbound{InboundEnvelope: demiurge.InboundEnvelope{Source: "alice@example.org"}}
	if err := restricted.Send(context.Background(), to, demiurge.Outbound{Text: "x"}); err == nil || err.Error() != "email delivery recipient is not allowed" {
		t.Fatalf("recipient: %v", err)
	}
	c = cfg
	c.SMTPPassword = "wrong-password"
	wrong, _ := email.New(c)
	if err := wrong.Send(context.Background(), to, demiurge.Outbound{Text: "x"}); err == nil || strings.Contains(err.Error(), "wrong-password") {
		t.Fatalf("bad SMTP login: %v", err)
	}
}
