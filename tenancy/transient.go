package tenancy

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Failure says what a database error means for the request that got it.
type Failure int

const (
	// Permanent is every error that is not a passing database failure: a bug, bad input, a
	// constraint. The mapper decides its status as usual.
	Permanent Failure = iota
	// Transient is a passing failure that left nothing behind: the connection could not be made
	// or broke before COMMIT, the server is shutting down or full, a serialization failure or a
	// deadlock. The transaction rolled back, so the request may be run again (503 when the
	// retry budget is spent).
	Transient
	// CommitUnknown: the connection broke while COMMIT was on its way. The change may or may not
	// be stored; only the client can retry (503 commit_outcome_unknown), and Idempotency-Key
	// makes that retry safe.
	CommitUnknown
)

func (f Failure) String() string {
	switch f {
	case Transient:
		return "transient"
	case CommitUnknown:
		return "commit_unknown"
	}
	return "permanent"
}

// commitError wraps the error of a request transaction's COMMIT, so that Classify can tell a
// broken COMMIT (outcome unknown) from a broken statement (nothing stored).
type commitError struct{ err error }

func (e *commitError) Error() string { return "commit request transaction: " + e.err.Error() }
func (e *commitError) Unwrap() error { return e.err }

// transientCodes are the SQLSTATEs after which the transaction is gone and running it again is
// the remedy PostgreSQL recommends (docs "Serialization Failure Handling"; class 08 and the
// shutdown codes of class 57; 53300 too_many_connections).
var transientCodes = map[string]bool{
	"40001": true, // serialization_failure
	"40P01": true, // deadlock_detected
	"57P01": true, // admin_shutdown
	"57P02": true, // crash_shutdown
	"57P03": true, // cannot_connect_now (starting up, shutting down, recovering)
	"53300": true, // too_many_connections
	"53400": true, // configuration_limit_exceeded
}

// Classify tells a passing database failure from everything else. It looks through wrapping
// (fmt.Errorf %w, errors.Join). A canceled or timed-out request context is Permanent: the
// client left, or the request ran out of its own time.
func Classify(err error) Failure {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Permanent
	}
	var ce *commitError
	if errors.As(err, &ce) {
		var pe *pgconn.PgError
		if errors.As(ce.err, &pe) {
			switch {
			case pe.Code == "40001" || pe.Code == "40P01":
				// A definite refusal of COMMIT rolled the transaction back: nothing stored.
				return Transient
			case strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57"):
				return CommitUnknown
			}
			return Permanent // e.g. a deferred constraint: refused, rolled back
		}
		if lostConnection(ce.err) {
			return CommitUnknown
		}
		return Permanent
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		if transientCodes[pe.Code] || strings.HasPrefix(pe.Code, "08") {
			return Transient
		}
		return Permanent
	}
	if lostConnection(err) {
		return Transient
	}
	return Permanent
}

// lostConnection reports an error of the connection itself: it could not be made, was closed,
// reset or cut short.
func lostConnection(err error) bool {
	var connect *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &connect), pgconn.SafeToRetry(err),
		errors.Is(err, pgconn.ErrConnClosed), errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.As(err, &netErr):
		return true
	}
	return false
}

type retryKey struct{}

// WithRetryDeadline lets a request transaction that cannot begin (no connection, the server
// restarting) be tried again, with backoff, until deadline: a blip shorter than the budget costs
// the client latency, not an error. Without it the first failure is returned.
func WithRetryDeadline(ctx context.Context, deadline time.Time) context.Context {
	return context.WithValue(ctx, retryKey{}, deadline)
}

// RetryDeadline is the deadline WithRetryDeadline set.
func RetryDeadline(ctx context.Context) (time.Time, bool) {
	t, ok := ctx.Value(retryKey{}).(time.Time)
	return t, ok
}

// Backoff is the wait before retry n (0 first): 20 ms doubling up to 320 ms, with up to half
// again of random jitter, so that the requests of a burst do not all knock at once.
func Backoff(n int) time.Duration {
	d := 20 * time.Millisecond << min(n, 4)
	return d + rand.N(d/2+1)
}

// WaitRetry waits before retry n when the deadline in ctx leaves time for it, and reports
// whether the caller should try again.
func WaitRetry(ctx context.Context, n int) bool {
	deadline, ok := RetryDeadline(ctx)
	if !ok {
		return false
	}
	wait := Backoff(n)
	if time.Now().Add(wait).After(deadline) {
		return false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
