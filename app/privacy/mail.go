package privacy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Mailboxes is what an erasure needs of the e-mail area: one whole sync of a company mailbox
// now (emails.Module.SyncMailbox). The erasure deletes the person's messages from our tables,
// not from the broker's IMAP server; the sync reads only UIDs above a folder's last synced one,
// so what it has stored before the erasure never comes back, but what it has not stored yet
// would come back unlinked (docs/decisions/privacy.md "Mail not synced yet").
type Mailboxes interface {
	SyncMailbox(ctx context.Context, company, mailboxID uuid.UUID, o emails.SyncOptions) (emails.SyncReport, error)
}

// UseMailboxes gives the module the e-mail area's sync (set by app/server.go once the e-mail
// module is built). Without it an erasure does not sync (a module built for a test of other
// steps).
func (m *Module) UseMailboxes(mb Mailboxes) { m.mailboxes = mb }

// ErrMailboxesBehind: a mailbox of the company could not be read to bring it up to date; the
// erasure waits (the job snoozes) until mailWaitLimit after the request was made.
var ErrMailboxesBehind = errors.New("a mailbox of the company could not be brought up to date")

// mailWait is how long an erasure waits before it tries a mailbox that could not be read
// again: a mail server that is down or refuses connections is usually back within minutes.
const mailWait = 5 * time.Minute

// mailWaitLimit bounds the waiting, from the request's creation: an erasure is due within a
// month (Art. 12 (3) GDPR) and must not hang on a broken mailbox; after a day it proceeds and
// its summary names the mailboxes left behind.
const mailWaitLimit = 24 * time.Hour

// Summary keys of the mail step: messages the sync stored for the erasure, and (one key per
// mailbox, value 1) the mailboxes that could not be brought up to date.
const (
	summarySynced   = "synced.emails"
	summaryUnsynced = "unsynced.mailbox."
)

// syncMailboxes brings every mailbox of the company up to date before the erasure reads its
// plan, so every message the servers held at that moment is stored, linked to the contact by
// its address (the contact is still there), and then retained and deleted with the rest. It
// returns what the request's summary records. A paused mailbox (its login was refused: only
// the operator's new password resumes it) is not waited for; one whose server could not be
// read is, until mailWaitLimit (ErrMailboxesBehind); both are then named in the summary.
func (m *Module) syncMailboxes(ctx context.Context, company uuid.UUID, req *ent.PrivacyRequest) (map[string]int, error) {
	out := map[string]int{}
	if m.mailboxes == nil {
		return out, nil
	}
	type box struct {
		id     uuid.UUID
		paused bool
	}
	var boxes []box
	err := tenancy.CompanyTx(ctx, m.d.DB, company, func(ctx context.Context) error {
		return query(ctx, `SELECT id, sync_state = 'paused' FROM mailboxes ORDER BY id`, nil, func(rows rowScanner) error {
			var b box
			if err := rows.Scan(&b.id, &b.paused); err != nil {
				return err
			}
			boxes = append(boxes, b)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("mailboxes: %w", err)
	}
	var failed []string
	for _, b := range boxes {
		if b.paused {
			out[summaryUnsynced+b.id.String()] = 1
			continue
		}
		rep, err := m.mailboxes.SyncMailbox(ctx, company, b.id, emails.SyncOptions{})
		if rep.Stored > 0 {
			out[summarySynced] += rep.Stored
		}
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err() // cancelled or timed out: the next attempt starts over
		case err != nil:
			m.d.Log.Warn().Err(err).Str("privacy_request_id", req.ID.String()).Str("mailbox_id", b.id.String()).
				Msg("erasure: mailbox sync failed")
			failed = append(failed, b.id.String())
			out[summaryUnsynced+b.id.String()] = 1
		case rep.Paused:
			out[summaryUnsynced+b.id.String()] = 1
		}
	}
	if len(failed) > 0 && m.now().Before(req.CreatedAt.Add(mailWaitLimit)) {
		return nil, fmt.Errorf("%w: %s", ErrMailboxesBehind, strings.Join(failed, ", "))
	}
	return out, nil
}
