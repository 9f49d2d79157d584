// Package mail is the e-mail machinery below the e-mail area, without HTTP or database: MIME
// compose and parse (emersion/go-message), HTML sanitising (bluemonday), an SMTP client
// (emersion/go-smtp) and an IMAP client (emersion/go-imap/v2).
package mail

import (
	"crypto/tls"
	"time"
)

// Address is one address of a header.
type Address struct {
	Email string
	Name  string
}

// Server names a mail server and its credentials. URL is smtp://host:port (STARTTLS when the
// server offers it; required unless the host is loopback), smtps://host:port (implicit TLS),
// imap://host:port (STARTTLS likewise) or imaps://host:port.
type Server struct {
	URL      string
	Username string
	Password string
}

// Config is how clients reach servers.
type Config struct {
	// TLS is the base TLS configuration (RootCAs for a test server's certificate); nil: system roots.
	TLS *tls.Config
	// Timeout bounds dialling and each command (default 30 s).
	Timeout time.Duration
}
