package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/tenancy"
)

// InsertAtCommit inserts a job for a row the request transaction of ctx is writing: on the job
// pool (the request role may not reach the queue), scheduled at scheduledAt, and made available
// at once when that transaction commits, deleted when it rolls back. A process that dies
// between the commit and the release leaves a job that still runs at scheduledAt: a lost
// release is a late job, never a lost one (an e-mail send, an extraction). Outside a request
// transaction (a worker's own write) the job simply runs when scheduled; inRequest says which.
func InsertAtCommit(ctx context.Context, q *Client, args river.JobArgs, opts river.InsertOpts,
	scheduledAt time.Time) (inRequest bool, err error) {
	if q == nil {
		return false, fmt.Errorf("queue %s: no job queue bound", args.Kind())
	}
	opts.ScheduledAt = scheduledAt
	res, err := q.Insert(ctx, args, &opts)
	if err != nil {
		return false, fmt.Errorf("queue %s: %w", args.Kind(), err)
	}
	job := res.Job.ID
	after := func(what string, fn func(ctx context.Context) error) func() {
		return func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if err := fn(ctx); err != nil {
				zerolog.Ctx(ctx).Warn().Err(err).Str("kind", args.Kind()).Int64("job_id", job).
					Msg(what + " (the scheduled job runs later)")
			}
		}
	}
	if err := tenancy.AfterCommit(ctx, after("release job", func(ctx context.Context) error {
		_, err := q.JobRetry(ctx, job)
		return err
	})); err != nil {
		return false, nil
	}
	return true, tenancy.AfterRollback(ctx, after("delete job", func(ctx context.Context) error {
		_, err := q.JobDelete(ctx, job)
		return err
	}))
}
