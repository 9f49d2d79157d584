package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// SMTPError is a reply of an SMTP server that refused a command.
type SMTPError struct {
	Code     int    // e.g. 550
	Enhanced string // e.g. "5.1.1", "" when the server sent none
	Message  string
}

func (e *SMTPError) Error() string {
	if e.Enhanced != "" {
		return fmt.Sprintf("smtp: %d %s %s", e.Code, e.Enhanced, e.Message)
	}
	return fmt.Sprintf("smtp: %d %s", e.Code, e.Message)
}

// Temporary reports whether the server asked to try again later (4xx).
func (e *SMTPError) Temporary() bool { return e.Code >= 400 && e.Code < 500 }

// smtpSchemes are the URL schemes of Send with their default ports (submission, RFC 8314).
var smtpSchemes = map[string]int{"smtp": 587, "smtps": 465}

// Send submits raw to srv as from for rcpts (the envelope: To, Cc and Bcc). smtp:// uses
// STARTTLS when the server offers it and requires it unless the host is loopback; smtps:// is
// implicit TLS. With srv.Username set it logs in (AUTH PLAIN, else LOGIN). A server's refusal is
// a *SMTPError (Temporary for 4xx); a refused login also wraps ErrAuth.
func Send(ctx context.Context, cfg Config, srv Server, from string, rcpts []string, raw []byte) error {
	cfg = cfg.WithDefaults()
	ep, err := parseEndpoint(srv.URL, smtpSchemes)
	if err != nil {
		return err
	}
	if len(rcpts) == 0 {
		return errors.New("mail: no recipients")
	}
	for _, a := range append([]string{from}, rcpts...) {
		if err := CheckHeader("envelope address", a); err != nil {
			return err
		}
	}
	if from != "" {
		if err := CheckAddress("envelope sender", Address{Email: from}); err != nil {
			return err
		}
	}
	for _, r := range rcpts {
		if err := CheckAddress("envelope recipient", Address{Email: r}); err != nil {
			return err
		}
	}

	c, err := openSMTP(ctx, cfg, ep, srv)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Mail(from, nil); err != nil {
		return smtpErr("MAIL FROM", err)
	}
	for _, r := range rcpts {
		if err := c.Rcpt(r, nil); err != nil {
			return smtpErr("RCPT TO "+r, err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return smtpErr("DATA", err)
	}
	// go-smtp bounds commands, not the upload of the data: allow the timeout plus a second per
	// 64 KiB (a server that stops reading must not hold a send job forever).
	_ = c.conn.SetWriteDeadline(time.Now().Add(cfg.Timeout + time.Duration(len(raw)>>16)*time.Second))
	if _, err := w.Write(raw); err != nil {
		_ = w.Close()
		return smtpErr("DATA", err)
	}
	if err := w.Close(); err != nil {
		return smtpErr("DATA", err)
	}
	// The message is accepted: a failing QUIT changes nothing.
	_ = c.Quit()
	return nil
}

// smtpClient is a connected, greeted SMTP client and its connection (closed together).
type smtpClient struct {
	*smtp.Client
	conn net.Conn
	stop func() bool
}

func (c *smtpClient) Close() error {
	c.stop()
	return c.Client.Close()
}

// dialSMTP connects and secures the connection as the scheme and host demand. ctx cancels
// openSMTP connects to ep and logs in when srv has a username (closing the connection when the
// login fails): what Send and Check both begin with.
func openSMTP(ctx context.Context, cfg Config, ep endpoint, srv Server) (*smtpClient, error) {
	c, err := dialSMTP(ctx, cfg, ep, srv.Username != "")
	if err != nil {
		return nil, err
	}
	if srv.Username != "" {
		if err := smtpAuth(c, srv); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// everything up to Close.
func dialSMTP(ctx context.Context, cfg Config, ep endpoint, withPassword bool) (*smtpClient, error) {
	tlsCfg := cfg.tlsConfig(ep.host)
	if !ep.implicitTLS() && !plaintextAllowed(ep.host) {
		// A remote host: STARTTLS or nothing (a man in the middle could strip STARTTLS from
		// the EHLO answer; without it a password would cross the network in the clear).
		c, err := dialStartTLS(ctx, cfg, ep, tlsCfg)
		if err != nil && strings.Contains(err.Error(), "support STARTTLS") {
			what := "the message"
			if withPassword {
				what = "the password"
			}
			return nil, fmt.Errorf("%w: %s does not offer STARTTLS and would receive %s in plaintext (use smtps:// or a server with STARTTLS)", ErrInsecure, ep.addr, what)
		}
		return c, err
	}

	conn, err := cfg.dial(ctx, ep.addr)
	if err != nil {
		return nil, fmt.Errorf("mail: connect to %s: %w", ep.addr, err)
	}
	// Cancelling ctx ends the conversation at once (go-smtp sets deadlines of its own per
	// command, so closing is the one sure way).
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	fail := func(err error) (*smtpClient, error) {
		stop()
		conn.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("mail: %s: %w", ep.addr, ctx.Err())
		}
		return nil, err
	}

	var c *smtp.Client
	if ep.implicitTLS() {
		tc := tls.Client(conn, tlsCfg)
		_ = tc.SetDeadline(time.Now().Add(cfg.Timeout))
		if err := tc.HandshakeContext(ctx); err != nil {
			return fail(fmt.Errorf("mail: TLS with %s: %w", ep.addr, err))
		}
		_ = tc.SetDeadline(time.Time{})
		c = smtp.NewClient(tc)
	} else {
		c = smtp.NewClient(conn)
	}
	setTimeouts(c, cfg)
	if err := c.Hello(cfg.LocalName); err != nil {
		return fail(smtpErr("EHLO", err))
	}
	if !ep.implicitTLS() {
		// Loopback: STARTTLS when offered, plaintext otherwise.
		if ok, _ := c.Extension("STARTTLS"); ok {
			// go-smtp starts TLS only on a fresh client: greet again on a new connection.
			stop()
			c.Close()
			return dialStartTLS(ctx, cfg, ep, tlsCfg)
		}
	}
	return &smtpClient{Client: c, conn: conn, stop: stop}, nil
}

// dialStartTLS connects to a server known to offer STARTTLS and upgrades at once.
func dialStartTLS(ctx context.Context, cfg Config, ep endpoint, tlsCfg *tls.Config) (*smtpClient, error) {
	conn, err := cfg.dial(ctx, ep.addr)
	if err != nil {
		return nil, fmt.Errorf("mail: connect to %s: %w", ep.addr, err)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	// go-smtp waits for the greeting with its default command timeout (5 min) before our
	// timeout can be set on the client: a watchdog bounds the greeting and the TLS handshake.
	watchdog := time.AfterFunc(cfg.Timeout, func() { conn.Close() })
	c, err := smtp.NewClientStartTLS(conn, tlsCfg)
	watchdog.Stop()
	if err != nil {
		stop()
		conn.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("mail: %s: %w", ep.addr, ctx.Err())
		}
		return nil, fmt.Errorf("mail: STARTTLS with %s: %w", ep.addr, toSMTPError(err))
	}
	setTimeouts(c, cfg)
	// After STARTTLS the client greets again (RFC 3207 §4.2), now with our name.
	if err := c.Hello(cfg.LocalName); err != nil {
		stop()
		c.Close()
		return nil, smtpErr("EHLO", err)
	}
	return &smtpClient{Client: c, conn: conn, stop: stop}, nil
}

func setTimeouts(c *smtp.Client, cfg Config) {
	c.CommandTimeout = cfg.Timeout
	// The server may check the whole message (virus scan, DKIM) before it answers the final dot.
	c.SubmissionTimeout = 2 * cfg.Timeout
}

// smtpAuth logs in with PLAIN, else LOGIN.
func smtpAuth(c *smtpClient, srv Server) error {
	if ok, _ := c.Extension("AUTH"); !ok {
		return fmt.Errorf("mail: the server offers no AUTH but a username is configured")
	}
	var a sasl.Client
	switch {
	case c.SupportsAuth("PLAIN"):
		a = sasl.NewPlainClient("", srv.Username, srv.Password)
	case c.SupportsAuth("LOGIN"):
		a = sasl.NewLoginClient(srv.Username, srv.Password)
	default:
		return fmt.Errorf("mail: the server offers neither AUTH PLAIN nor LOGIN")
	}
	if err := c.Auth(a); err != nil {
		se := toSMTPError(err)
		var e *SMTPError
		if errors.As(se, &e) && (e.Code == 535 || e.Enhanced == "5.7.8") {
			// 535 5.7.8: the credentials are wrong. Other replies (454 temporary failure of
			// the server's authentication, 504 unknown mechanism) are no verdict on them.
			return fmt.Errorf("%w: %w", ErrAuth, se)
		}
		return fmt.Errorf("mail: AUTH: %w", se)
	}
	return nil
}

// smtpErr wraps a failed command's error, the server's reply as *SMTPError.
func smtpErr(cmd string, err error) error {
	se := toSMTPError(err)
	var e *SMTPError
	if errors.As(se, &e) {
		return se
	}
	return fmt.Errorf("mail: %s: %w", cmd, se)
}

// toSMTPError converts go-smtp's reply error to ours; other errors pass unchanged.
func toSMTPError(err error) error {
	var e *smtp.SMTPError
	if errors.As(err, &e) {
		enh := ""
		if e.EnhancedCode != smtp.NoEnhancedCode && e.EnhancedCode != smtp.EnhancedCodeNotSet && e.EnhancedCode != (smtp.EnhancedCode{}) {
			enh = strconv.Itoa(e.EnhancedCode[0]) + "." + strconv.Itoa(e.EnhancedCode[1]) + "." + strconv.Itoa(e.EnhancedCode[2])
		}
		return &SMTPError{Code: e.Code, Enhanced: enh, Message: e.Message}
	}
	return err
}
