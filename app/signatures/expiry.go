package signatures

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/signaturerequest"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Expiry (docs/decisions/signatures.md "Expiry"). A pending request becomes expired when its
// expires_at passes, in two ways that agree:
//
//   - each request has its own job (ExpireArgs), inserted when the request is made and
//     scheduled at its expires_at: it runs in the company's transaction and expires the request
//     if it is still pending then. No query across companies is needed (row-level security
//     shows one company at a time, and the jobs role has no function listing requests due), and
//     a request whose transaction rolled back leaves a job that finds nothing.
//   - every read and write of a request (GET, the list, cancel, remind, the signing page)
//     expires it first when it is due (expireDue): the job may run late (workers down), and the
//     answer must never show a request as pending, nor accept a signature, past its expiry.
//
// Both change the row only while it is pending (a conditional update under the row's lock), so
// signature_request.expired is recorded once.

// ExpireArgs name the expiry of one request.
type ExpireArgs struct {
	CompanyID uuid.UUID `json:"companyId"`
	RequestID uuid.UUID `json:"requestId"`
}

// Kind names the job.
func (ExpireArgs) Kind() string { return "signature_request_expire" }

// InsertOpts: maintenance queue; a failed run is retried (river's backoff).
func (ExpireArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: jobs.QueueDefault, MaxAttempts: 10}
}

// scheduleExpiry inserts the expiry job of r, scheduled at its expires_at, and deletes it again
// when the transaction of ctx rolls back (the job would find nothing, but need not wait for
// weeks). The job pool is not the request's: the request's role cannot reach the queue.
func (m *Module) scheduleExpiry(ctx context.Context, company uuid.UUID, r *ent.SignatureRequest) error {
	if m.queue == nil {
		return fmt.Errorf("signatures: no job queue bound")
	}
	opts := ExpireArgs{}.InsertOpts()
	opts.ScheduledAt = r.ExpiresAt
	res, err := m.queue.Insert(ctx, ExpireArgs{CompanyID: company, RequestID: r.ID}, &opts)
	if err != nil {
		return fmt.Errorf("queue expiry of signature request %s: %w", r.ID, err)
	}
	job := res.Job.ID
	return tenancy.AfterRollback(ctx, func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if _, err := m.queue.JobDelete(ctx, job); err != nil {
			zerolog.Ctx(ctx).Warn().Err(err).Int64("job_id", job).Msg("delete expiry job of a signature request not stored (it finds nothing when it runs)")
		}
	})
}

// expireWorker runs ExpireArgs.
type expireWorker struct {
	river.WorkerDefaults[ExpireArgs]
	m *Module
}

// Work expires the request if it is still pending and due (a request made later with the same
// id cannot exist; one whose expiry was never reached is left alone).
func (w *expireWorker) Work(ctx context.Context, job *river.Job[ExpireArgs]) error {
	return w.m.companyTx(ctx, job.Args.CompanyID, func(ctx context.Context) error {
		r, err := tenancy.Client(ctx).SignatureRequest.Query().Where(signaturerequest.ID(job.Args.RequestID)).ForUpdate().Only(ctx)
		if ent.IsNotFound(err) {
			return nil // rolled back when it was made, or gone with its contact
		}
		if err != nil {
			return fmt.Errorf("read signature request %s: %w", job.Args.RequestID, err)
		}
		_, err = w.m.expireDue(ctx, r)
		return err
	})
}

// expireDue expires r when it is pending and its expires_at has passed, recording
// signature_request.expired, and returns the request as it is now. It runs in the transaction
// of ctx (a request's, or a company transaction of the job or the signing page); the update
// is conditional on the status, so two callers record the event once.
func (m *Module) expireDue(ctx context.Context, r *ent.SignatureRequest) (*ent.SignatureRequest, error) {
	if r.Status != signaturerequest.StatusPending || m.d.Now().Before(r.ExpiresAt) {
		return r, nil
	}
	db := tenancy.Client(ctx)
	n, err := db.SignatureRequest.Update().
		Where(signaturerequest.ID(r.ID), signaturerequest.StatusEQ(signaturerequest.StatusPending)).
		SetStatus(signaturerequest.StatusExpired).Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("expire signature request %s: %w", r.ID, err)
	}
	cur, err := db.SignatureRequest.Get(ctx, r.ID)
	if err != nil {
		return nil, fmt.Errorf("read signature request %s: %w", r.ID, err)
	}
	if n == 1 {
		if err := m.recordEvent(ctx, "signature_request.expired", cur); err != nil {
			return nil, err
		}
	}
	return cur, nil
}
