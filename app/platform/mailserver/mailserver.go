// Package mailserver is an embedded loopback mail server: SMTP (emersion/go-smtp) in and IMAP
// (emersion/go-imap/v2 imapserver with its in-memory backend) out, in this process, on random
// ports of 127.0.0.1. The tests run the real protocols against it, and `brokerdesk dev` gives the
// demo company a working mailbox on it.
//
// SMTP accepts AUTH PLAIN of the known users and also unauthenticated submissions (a catch-all
// relay for tests), records every envelope, and delivers a copy into the INBOX of each recipient
// that is a local user: a test can read a mail as the customer and reply from there.
package mailserver

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Options configure Start.
type Options struct {
	// TLS gives the server a self-signed certificate for 127.0.0.1/localhost and offers
	// STARTTLS on SMTP and IMAP (clients trust it through RootCAs).
	TLS bool
	// Debug receives the raw protocol of both servers (passwords included) when set.
	Debug io.Writer
}

// Envelope is one message SMTP accepted.
type Envelope struct {
	From string
	To   []string
	Data []byte
}

// Server is a running mail server.
type Server struct {
	smtp     *smtp.Server
	imap     *imapserver.Server
	smtpAddr string
	imapAddr string
	roots    *x509.CertPool

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on each received message
	users    map[string]*user
	received []Envelope
	failNext *smtp.SMTPError
	failAll  *smtp.SMTPError // every DATA until Heal
	closed   bool
}

type user struct {
	password string
	mem      *imapmemserver.User
	// folders are the user's mailbox names with their SPECIAL-USE attributes (RFC 6154), kept
	// here because the memory backend does not store them.
	folders map[string][]imap.MailboxAttr
}

// Start starts SMTP and IMAP on 127.0.0.1, random free ports.
func Start(o Options) (*Server, error) {
	s := &Server{users: map[string]*user{}, changed: make(chan struct{})}
	var tlsCfg *tls.Config
	if o.TLS {
		cert, pool, err := selfSigned()
		if err != nil {
			return nil, err
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		s.roots = pool
	}
	quiet := log.New(io.Discard, "", 0)

	smtpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("mailserver: SMTP listen: %w", err)
	}
	imapLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		smtpLn.Close()
		return nil, fmt.Errorf("mailserver: IMAP listen: %w", err)
	}
	s.smtpAddr, s.imapAddr = smtpLn.Addr().String(), imapLn.Addr().String()

	ss := smtp.NewServer(smtpBackend{s})
	ss.Domain = "localhost"
	ss.AllowInsecureAuth = true // loopback only
	ss.TLSConfig = tlsCfg
	ss.MaxMessageBytes = 64 << 20
	ss.MaxRecipients = 1000
	ss.ReadTimeout = 2 * time.Minute
	ss.WriteTimeout = 2 * time.Minute
	ss.ErrorLog = quiet
	if o.Debug != nil {
		ss.Debug = o.Debug
	}
	s.smtp = ss

	is := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return &imapSession{srv: s}, nil, nil
		},
		Caps:         imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}, imap.CapSpecialUse: {}, imap.CapCreateSpecialUse: {}},
		Logger:       quiet,
		TLSConfig:    tlsCfg,
		InsecureAuth: true, // loopback only
		DebugWriter:  o.Debug,
	})
	s.imap = is

	go func() { _ = ss.Serve(smtpLn) }()
	go func() { _ = is.Serve(imapLn) }()
	return s, nil
}

// SMTPURL is "smtp://127.0.0.1:PORT".
func (s *Server) SMTPURL() string { return "smtp://" + s.smtpAddr }

// IMAPURL is "imap://127.0.0.1:PORT".
func (s *Server) IMAPURL() string { return "imap://" + s.imapAddr }

// SMTPAddr and IMAPAddr are host:port (for a desktop mail client's settings).
func (s *Server) SMTPAddr() string { return s.smtpAddr }
func (s *Server) IMAPAddr() string { return s.imapAddr }

// RootCAs trusts the server's certificate; nil without TLS.
func (s *Server) RootCAs() *x509.CertPool { return s.roots }

// normalize is the key of a user: addresses compare case-insensitively here (the local part is
// case-sensitive by the RFC, never in practice).
func normalize(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// AddUser creates an account (INBOX, and Sent marked \Sent) that IMAP LOGIN and SMTP AUTH accept
// with email as the username.
func (s *Server) AddUser(email, password string) error {
	key := normalize(email)
	if key == "" || !strings.Contains(key, "@") {
		return fmt.Errorf("mailserver: %q is no e-mail address", email)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.users[key]; ok {
		return fmt.Errorf("mailserver: user %s exists", email)
	}
	// The memory backend's own password is never checked: imapSession.Login checks ours, so
	// SetPassword can change it.
	mem := imapmemserver.NewUser(key, "")
	for _, name := range []string{"INBOX", "Sent"} {
		if err := mem.Create(name, nil); err != nil {
			return fmt.Errorf("mailserver: create %s: %w", name, err)
		}
		_ = mem.Subscribe(name)
	}
	s.users[key] = &user{password: password, mem: mem, folders: map[string][]imap.MailboxAttr{
		"INBOX": nil,
		"Sent":  {imap.MailboxAttrSent},
	}}
	return nil
}

// SetPassword changes a user's password (a test of a mailbox whose password was changed).
func (s *Server) SetPassword(email, password string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[normalize(email)]
	if !ok {
		return fmt.Errorf("mailserver: no user %s", email)
	}
	u.password = password
	return nil
}

// checkLogin returns the user when username and password match.
func (s *Server) checkLogin(username, password string) *user {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[normalize(username)]
	if !ok || subtle.ConstantTimeCompare([]byte(u.password), []byte(password)) != 1 {
		return nil
	}
	return u
}

// Received returns every message SMTP accepted, in order (a copy).
func (s *Server) Received() []Envelope {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Envelope, len(s.received))
	for i, e := range s.received {
		out[i] = Envelope{From: e.From, To: append([]string(nil), e.To...), Data: append([]byte(nil), e.Data...)}
	}
	return out
}

// WaitReceived waits until at least n messages were accepted and returns them all.
func (s *Server) WaitReceived(ctx context.Context, n int) ([]Envelope, error) {
	for {
		s.mu.Lock()
		have, ch := len(s.received), s.changed
		s.mu.Unlock()
		if have >= n {
			return s.Received(), nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return s.Received(), fmt.Errorf("mailserver: %d of %d messages received: %w", have, n, ctx.Err())
		}
	}
}

// FailNext makes the next DATA answer code and message once (4xx temporary, 5xx permanent).
func (s *Server) FailNext(code int, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCode{code / 100, 0, 0}, Message: message}
}

// FailUntilHealed makes every DATA answer code and message until Heal: a test that must act
// while a send is being retried (the retry comes at river's pace, not the test's).
func (s *Server) FailUntilHealed(code int, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failAll = &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCode{code / 100, 0, 0}, Message: message}
}

// Heal ends FailUntilHealed.
func (s *Server) Heal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failAll = nil
}

// takeFailure returns and clears the injected failure (FailNext), or the standing one
// (FailUntilHealed).
func (s *Server) takeFailure() *smtp.SMTPError {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.failNext
	s.failNext = nil
	if f == nil {
		f = s.failAll
	}
	return f
}

// Deliver puts raw straight into the INBOX of email (a message SMTP would refuse, malformed
// MIME for instance).
func (s *Server) Deliver(email string, raw []byte) error {
	s.mu.Lock()
	u, ok := s.users[normalize(email)]
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("mailserver: no user %s", email)
	}
	_, err := u.mem.Append("INBOX", literal{bytes.NewReader(raw), int64(len(raw))}, &imap.AppendOptions{Time: time.Now()})
	return err
}

// accept records an envelope and delivers it to the local recipients.
func (s *Server) accept(env Envelope) {
	s.mu.Lock()
	s.received = append(s.received, env)
	var local []*user
	seen := map[string]bool{}
	for _, r := range env.To {
		k := normalize(r)
		if u, ok := s.users[k]; ok && !seen[k] {
			seen[k] = true
			local = append(local, u)
		}
	}
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	for _, u := range local {
		_, _ = u.mem.Append("INBOX", literal{bytes.NewReader(env.Data), int64(len(env.Data))}, &imap.AppendOptions{Time: time.Now()})
	}
}

// Close stops both servers.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	err1 := s.smtp.Close()
	err2 := s.imap.Close()
	if err1 != nil && !errors.Is(err1, smtp.ErrServerClosed) {
		return err1
	}
	if err2 != nil && !errors.Is(err2, net.ErrClosed) {
		return err2
	}
	return nil
}

// literal is an imap.LiteralReader over bytes.
type literal struct {
	*bytes.Reader
	size int64
}

func (l literal) Size() int64 { return l.size }

// imapSession is the memory backend's session with our login (passwords can change).
type imapSession struct {
	*imapmemserver.UserSession // nil until login
	srv                        *Server
	user                       *user // nil until login
}

func (sess *imapSession) Login(username, password string) error {
	u := sess.srv.checkLogin(username, password)
	if u == nil {
		return imapserver.ErrAuthFailed
	}
	sess.UserSession = imapmemserver.NewUserSession(u.mem)
	sess.user = u
	return nil
}

// The mailbox operations keep user.folders in step with the backend.

func (sess *imapSession) Create(name string, options *imap.CreateOptions) error {
	if err := sess.UserSession.Create(name, options); err != nil {
		return err
	}
	name = strings.TrimRight(name, "/")
	var attrs []imap.MailboxAttr
	if options != nil {
		attrs = append(attrs, options.SpecialUse...)
	}
	sess.srv.mu.Lock()
	sess.user.folders[name] = attrs
	sess.srv.mu.Unlock()
	return nil
}

func (sess *imapSession) Delete(name string) error {
	if err := sess.UserSession.Delete(name); err != nil {
		return err
	}
	sess.srv.mu.Lock()
	delete(sess.user.folders, name)
	sess.srv.mu.Unlock()
	return nil
}

func (sess *imapSession) Rename(name, newName string, options *imap.RenameOptions) error {
	if err := sess.UserSession.Rename(name, newName, options); err != nil {
		return err
	}
	newName = strings.TrimRight(newName, "/")
	sess.srv.mu.Lock()
	sess.user.folders[newName] = sess.user.folders[name]
	delete(sess.user.folders, name)
	sess.srv.mu.Unlock()
	return nil
}

// List answers LIST (and LSUB) from user.folders, with the SPECIAL-USE attributes the memory
// backend cannot report. Every folder counts as subscribed.
func (sess *imapSession) List(w *imapserver.ListWriter, ref string, patterns []string, options *imap.ListOptions) error {
	if len(patterns) == 0 {
		return w.WriteList(&imap.ListData{Attrs: []imap.MailboxAttr{imap.MailboxAttrNoSelect}, Delim: '/'})
	}
	sess.srv.mu.Lock()
	names := make([]string, 0, len(sess.user.folders))
	special := map[string][]imap.MailboxAttr{}
	for name, attrs := range sess.user.folders {
		names = append(names, name)
		special[name] = attrs
	}
	sess.srv.mu.Unlock()
	slices.Sort(names)
	for _, name := range names {
		match := false
		for _, p := range patterns {
			if imapserver.MatchList(name, '/', ref, p) {
				match = true
				break
			}
		}
		if !match || (options.SelectSpecialUse && len(special[name]) == 0) {
			continue
		}
		data := imap.ListData{Mailbox: name, Delim: '/'}
		if options.SelectSubscribed || options.ReturnSubscribed {
			data.Attrs = append(data.Attrs, imap.MailboxAttrSubscribed)
		}
		if options.ReturnSpecialUse || options.SelectSpecialUse {
			data.Attrs = append(data.Attrs, special[name]...)
		}
		if options.ReturnStatus != nil {
			st, err := sess.UserSession.Status(name, options.ReturnStatus)
			if err != nil {
				return err
			}
			data.Status = st
		}
		if err := w.WriteList(&data); err != nil {
			return err
		}
	}
	return nil
}

func (sess *imapSession) Close() error {
	if sess.UserSession == nil {
		return nil
	}
	return sess.UserSession.Close()
}

// smtpBackend makes a session per connection.
type smtpBackend struct{ srv *Server }

func (b smtpBackend) NewSession(*smtp.Conn) (smtp.Session, error) {
	return &smtpSession{srv: b.srv}, nil
}

type smtpSession struct {
	srv  *Server
	from string
	to   []string
}

var _ smtp.AuthSession = (*smtpSession)(nil)

func (sess *smtpSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (sess *smtpSession) Auth(mech string) (sasl.Server, error) {
	if mech != sasl.Plain {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if identity != "" && normalize(identity) != normalize(username) {
			return smtp.ErrAuthFailed
		}
		if sess.srv.checkLogin(username, password) == nil {
			return smtp.ErrAuthFailed
		}
		return nil
	}), nil
}

func (sess *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	sess.from = from
	sess.to = nil
	return nil
}

func (sess *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	sess.to = append(sess.to, to)
	return nil
}

func (sess *smtpSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if f := sess.srv.takeFailure(); f != nil {
		return f
	}
	sess.srv.accept(Envelope{From: sess.from, To: append([]string(nil), sess.to...), Data: data})
	return nil
}

func (sess *smtpSession) Reset() {
	sess.from = ""
	sess.to = nil
}

func (sess *smtpSession) Logout() error { return nil }

// selfSigned makes a certificate for 127.0.0.1, ::1 and localhost and a pool trusting it.
func selfSigned() (tls.Certificate, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "BrokerDesk loopback mail server"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}, pool, nil
}
