package testsvc

import (
	"testing"

	"github.com/brokerdesk/brokerdesk/app/platform/mailserver"
)

// MailServer starts an embedded loopback mail server (SMTP in, IMAP out, in this process) for one
// test and closes it when the test ends. Unlike PostgreSQL and Redis it is never shared between
// test processes: it starts in milliseconds and a test owns its mailboxes and fault injection.
func MailServer(t testing.TB, o mailserver.Options) *mailserver.Server {
	t.Helper()
	s, err := mailserver.Start(o)
	if err != nil {
		t.Fatalf("mail server: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
