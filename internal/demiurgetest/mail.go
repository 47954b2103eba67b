package demiurgetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Mail is a pair of real mail servers on loopback for the email channel's
// tests: go-imap's IMAP server with its in-memory backend and go-smtp's
// server, both STARTTLS-only (no login in the clear) with a certificate
// only ClientTLS trusts. The IMAP user is MailUser/MailIMAPPassword, the
// SMTP one MailUser/MailSMTPPassword.
type Mail struct {
	IMAPAddr, SMTPAddr string
	ClientTLS          *tls.Config

	t    testing.TB
	user *imapmemserver.User
	imap *imapserver.Server
	smtp *smtpServer
}

// Mail credentials.
const (
	MailUser         = "bot@example.com"
	MailIMAPPassword = "imap-secret-pw"
	MailSMTPPassword = "smtp-secret-pw"
)

// StartMail starts both servers until the test ends.
func StartMail(t testing.TB) *Mail {
	t.Helper()
	srvTLS, client := certs(t)
	im := startIMAP(t, srvTLS)
	sm := startSMTP(t, srvTLS)
	return &Mail{IMAPAddr: im.addr, SMTPAddr: sm.addr, ClientTLS: client, t: t, user: im.user, imap: im.srv, smtp: sm}
}

// Deliver puts a raw RFC 5322 message into the INBOX.
func (m *Mail) Deliver(raw string) {
	m.t.Helper()
	if _, err := m.user.Append("INBOX", literal(raw), &imap.AppendOptions{}); err != nil {
		m.t.Fatal(err)
	}
}

// CloseIMAP stops the IMAP server (connections drop).
func (m *Mail) CloseIMAP() { m.imap.Close() }

// SentMail is one message the SMTP server accepted.
type SentMail struct {
	From, To string
	Data     []byte
}

// Sent returns the messages the SMTP server accepted.
func (m *Mail) Sent() []SentMail {
	m.smtp.mu.Lock()
	defer m.smtp.mu.Unlock()
	return append([]SentMail(nil), m.smtp.msgs...)
}

// HostPort splits an address into host and port.
func HostPort(addr string) (string, int) {
	h, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return h, n
}

// certs returns a server certificate for 127.0.0.1 and a client TLS
// configuration that trusts only it.
func certs(t testing.TB) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}},
		&tls.Config{RootCAs: pool}
}

// imapServer is go-imap's own IMAP server with its in-memory backend,
// STARTTLS only (no login in the clear), on loopback.
type imapServer struct {
	addr string
	user *imapmemserver.User
	srv  *imapserver.Server
	ln   net.Listener
}

func startIMAP(t testing.TB, tlsCfg *tls.Config) *imapServer {
	t.Helper()
	mem := imapmemserver.New()
	user := imapmemserver.NewUser(MailUser, MailIMAPPassword)
	if err := user.Create("INBOX", nil); err != nil {
		t.Fatal(err)
	}
	mem.AddUser(user)
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		Caps:      imap.CapSet{imap.CapIMAP4rev1: {}},
		TLSConfig: tlsCfg,
		Logger:    log.New(io.Discard, "", 0),
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	s := &imapServer{addr: ln.Addr().String(), user: user, srv: srv, ln: ln}
	t.Cleanup(func() { srv.Close() })
	return s
}

type lit struct {
	*strings.Reader
}

func (l lit) Size() int64 { return int64(l.Len()) }

func literal(s string) imap.LiteralReader { return lit{strings.NewReader(s)} }

// smtpServer is go-smtp's server, STARTTLS and PLAIN authentication,
// recording each message it accepts.
type smtpServer struct {
	addr string
	mu   sync.Mutex
	msgs []SentMail
}

type smtpSession struct {
	s        *smtpServer
	authed   bool
	from, to string
}

func (ss *smtpSession) AuthMechanisms() []string { return []string{sasl.Plain} }
func (ss *smtpSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != MailUser || pass != MailSMTPPassword {
			return errors.New("bad credentials")
		}
		ss.authed = true
		return nil
	}), nil
}
func (ss *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	if !ss.authed {
		return smtp.ErrAuthRequired
	}
	ss.from = from
	return nil
}
func (ss *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error { ss.to = to; return nil }
func (ss *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	ss.s.mu.Lock()
	ss.s.msgs = append(ss.s.msgs, SentMail{From: ss.from, To: ss.to, Data: b})
	ss.s.mu.Unlock()
	return nil
}
func (ss *smtpSession) Reset()        {}
func (ss *smtpSession) Logout() error { return nil }

func startSMTP(t testing.TB, tlsCfg *tls.Config) *smtpServer {
	t.Helper()
	s := &smtpServer{}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &smtpSession{s: s}, nil }))
	srv.Domain, srv.TLSConfig, srv.AllowInsecureAuth = "localhost", tlsCfg, false
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	s.addr = ln.Addr().String()
	return s
}

// Seen counts the INBOX messages flagged \\Seen.
func (m *Mail) Seen() int {
	t := m.t
	t.Helper()
	c, err := imapclient.DialStartTLS(m.IMAPAddr, &imapclient.Options{TLSConfig: m.ClientTLS})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login(MailUser, MailIMAPPassword).Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	data, err := c.UIDSearch(&imap.SearchCriteria{Flag: []imap.Flag{imap.FlagSeen}}, nil).Wait()
	if err != nil {
		t.Fatal(err)
	}
	return len(data.AllUIDs())
}
