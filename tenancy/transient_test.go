package tenancy

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestClassify(t *testing.T) {
	pg := func(code string) error { return &pgconn.PgError{Code: code, Message: "x"} }
	wrap := func(err error) error { return fmt.Errorf("list leads: %w", err) }
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	cases := []struct {
		name string
		err  error
		want Failure
	}{
		{"nil", nil, Permanent},
		{"plain error", errors.New("boom"), Permanent},
		{"unique violation", pg("23505"), Permanent},
		{"syntax error", pg("42601"), Permanent},
		{"admin shutdown in a statement", wrap(pg("57P01")), Transient},
		{"crash shutdown", pg("57P02"), Transient},
		{"starting up", pg("57P03"), Transient},
		{"too many connections", wrap(pg("53300")), Transient},
		{"serialization failure", pg("40001"), Transient},
		{"deadlock", wrap(pg("40P01")), Transient},
		{"connection exception class 08", pg("08006"), Transient},
		{"connection refused", wrap(refused), Transient},
		{"unexpected EOF", wrap(io.ErrUnexpectedEOF), Transient},
		{"bad conn", driver.ErrBadConn, Transient},
		{"conn closed", pgconn.ErrConnClosed, Transient},
		{"client went away", wrap(context.Canceled), Permanent},
		{"request timed out", context.DeadlineExceeded, Permanent},
		{"commit: connection lost", &commitError{err: io.ErrUnexpectedEOF}, CommitUnknown},
		{"commit: admin shutdown", &commitError{err: pg("57P01")}, CommitUnknown},
		{"commit: serialization failure is a known rollback", &commitError{err: pg("40001")}, Transient},
		{"commit: deferred constraint is a known rollback", &commitError{err: pg("23505")}, Permanent},
		{"commit: other error", &commitError{err: errors.New("tx done")}, Permanent},
		{"joined", errors.Join(errors.New("release"), pg("57P01")), Transient},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Classify(c.err); got != c.want {
				t.Errorf("Classify(%v) = %s, want %s", c.err, got, c.want)
			}
		})
	}
}

func TestWaitRetry_StopsAtTheDeadline(t *testing.T) {
	if WaitRetry(context.Background(), 0) {
		t.Fatal("no deadline in the context: want no retry")
	}
	ctx := WithRetryDeadline(context.Background(), time.Now().Add(300*time.Millisecond))
	n := 0
	for WaitRetry(ctx, n) {
		n++
	}
	if n < 1 || n > 8 {
		t.Errorf("%d retries within 300 ms, want 1 to 8 (20 ms doubling)", n)
	}
	if d, _ := RetryDeadline(ctx); time.Now().After(d.Add(50 * time.Millisecond)) {
		t.Errorf("waited past the deadline")
	}
	for n := range 10 {
		if b := Backoff(n); b < 20*time.Millisecond || b > 480*time.Millisecond {
			t.Errorf("Backoff(%d) = %s, want 20 ms to 480 ms", n, b)
		}
	}
}
