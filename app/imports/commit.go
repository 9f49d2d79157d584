package imports

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contactimport"
	"github.com/brokerdesk/brokerdesk/ent/contactimportrow"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// commit writes a running import's rows in file order, a batch a transaction, until none is
// left; then the import is completed. Each batch takes the import's row lock, writes its
// contacts (through the contacts service: validation, owner, contact.created or
// contact.updated as the API records them), its rows' outcomes and the committed counter in
// one transaction: a run killed at any point leaves whole batches, and the next run takes the
// rows without an outcome, so no row becomes two contacts.
func (m *Module) commit(ctx context.Context, id uuid.UUID) error {
	for {
		done, committed, err := m.commitBatch(ctx, id)
		if err != nil || done {
			return err
		}
		if m.d.AfterBatch != nil {
			if err := m.d.AfterBatch(id, committed); err != nil {
				return err
			}
		}
	}
}

// commitBatch writes the next batch; done when the import is no longer running or had no row
// left (then it is completed).
func (m *Module) commitBatch(ctx context.Context, id uuid.UUID) (done bool, committed int, _ error) {
	err := m.withTx(ctx, func(ctx context.Context, tx *ent.Tx) error {
		im, err := tx.ContactImport.Query().Where(contactimport.ID(id)).ForUpdate().Only(ctx)
		if err != nil {
			return err
		}
		if im.Status != contactimport.StatusRunning {
			done = true
			return nil
		}
		rows, err := tx.ContactImportRow.Query().Where(contactimportrow.ImportID(id), contactimportrow.OutcomeIsNil()).
			Order(ent.Asc(contactimportrow.FieldRow)).Limit(m.d.BatchSize).All(ctx)
		if err != nil {
			return fmt.Errorf("read import rows: %w", err)
		}
		counts := maps.Clone(im.Counts)
		if counts == nil {
			counts = map[string]int{}
		}
		if len(rows) == 0 {
			done = true
			_, err := im.Update().SetStatus(contactimport.StatusCompleted).SetCompletedAt(m.d.Now()).Save(ctx)
			return err
		}
		c := committer{m: m, im: im, became: map[int]*uuid.UUID{}}
		for _, r := range rows {
			outcome, contactID, rowErrs, err := c.write(ctx, tx, r)
			if err != nil {
				return fmt.Errorf("commit import row %d: %w", r.Row, err)
			}
			c.became[r.Row] = contactID
			u := r.Update().SetOutcome(outcome).SetNillableContactID(contactID)
			if rowErrs != nil {
				u.SetErrors(rowErrs)
			}
			if err := u.Exec(ctx); err != nil {
				return fmt.Errorf("record import row %d: %w", r.Row, err)
			}
			counts[outcomeKey+string(outcome)]++
		}
		committed = im.Committed + len(rows)
		_, err = im.Update().SetCommitted(committed).SetCounts(counts).Save(ctx)
		return err
	})
	return done, committed, err
}

// committer writes the rows of one batch.
type committer struct {
	m  *Module
	im *ent.ContactImport
	// became is the contact each row of this batch became or matched, for a later row of the
	// same batch that duplicates it.
	became map[int]*uuid.UUID
}

// write commits one row by the import's duplicates policy and returns its outcome: an invalid
// row is skipped; a duplicate (of an existing contact, or of an earlier row: the contact that
// row became) is left alone (skip: outcome duplicate), filled in (update: updated) or created
// anyway (create); the rest are created. A row the contacts service refuses now (its owner was
// deleted since the analysis) fails with the service's errors; the batch goes on.
func (c *committer) write(ctx context.Context, tx *ent.Tx, r *ent.ContactImportRow) (contactimportrow.Outcome, *uuid.UUID, []string, error) {
	if r.Analysis == contactimportrow.AnalysisInvalid {
		return contactimportrow.OutcomeSkipped, nil, nil, nil
	}
	match := r.ContactID
	if r.DuplicateRow != nil {
		var err error
		if match, err = c.earlier(ctx, tx, *r.DuplicateRow); err != nil {
			return "", nil, nil, err
		}
	}
	policy := contactimport.DuplicatesSkip
	if c.im.Duplicates != nil {
		policy = *c.im.Duplicates
	}
	mapping := effectiveMapping(c.im)
	typ := string(c.im.ContactType)
	d, phoneCols := rowDoc(r.Cells, mapping, typ, c.m.d.Now())
	d.Tags = slices.Clone(c.im.Tags)
	if c.im.OwnerID != nil {
		o := c.im.OwnerID.String()
		d.OwnerID = &o
	}
	svc := c.m.d.Contacts
	var (
		outcome = contactimportrow.OutcomeCreated
		id      *uuid.UUID
	)
	err := tenancy.Savepoint(ctx, func() error {
		if match != nil && policy != contactimport.DuplicatesCreate {
			cur, err := svc.LockContact(ctx, *match)
			switch {
			case errors.Is(err, errs.ErrNotFound):
				// Deleted since the analysis: nothing to skip or fill, the row is created.
			case err != nil:
				return err
			case policy == contactimport.DuplicatesSkip:
				outcome, id = contactimportrow.OutcomeDuplicate, match
				return nil
			default:
				merged, err := fill(svc, cur, d)
				if err != nil {
					return err
				}
				saved, err := svc.SaveWith(ctx, cur, merged, phonesOf(d.Phones), false)
				if err != nil {
					return err
				}
				outcome, id = contactimportrow.OutcomeUpdated, &saved.ID
				return nil
			}
		}
		ct, err := svc.Create(ctx, d)
		if err != nil {
			return err
		}
		id = &ct.ID
		return nil
	})
	if errors.Is(err, errs.ErrInvalid) || errors.Is(err, errs.ErrConflict) {
		return contactimportrow.OutcomeFailed, nil, rowErrors(err, mapping, phoneCols), nil
	}
	if err != nil {
		return "", nil, nil, err
	}
	return outcome, id, nil, nil
}

// earlier is the contact row n of the import became or matched (nil when it was skipped or
// failed).
func (c *committer) earlier(ctx context.Context, tx *ent.Tx, n int) (*uuid.UUID, error) {
	if id, ok := c.became[n]; ok {
		return id, nil
	}
	r, err := tx.ContactImportRow.Query().Where(contactimportrow.ImportID(c.im.ID), contactimportrow.Row(n)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read import row %d: %w", n, err)
	}
	return r.ContactID, nil
}

// fill is the document of the update policy: the duplicate's own values, overwritten by every
// value the row has (an empty cell never clears one), its tags joined with the import's, its
// owner kept.
func fill(svc *contacts.Service, cur contacts.Contact, row contacts.Doc) (contacts.Doc, error) {
	d, err := svc.DocOf(cur.Contact)
	if err != nil {
		return contacts.Doc{}, fmt.Errorf("read contact %s: %w", cur.ID, err)
	}
	if row.FirstName != nil {
		d.FirstName = row.FirstName
	}
	if row.LastName != nil {
		d.LastName = row.LastName
	}
	if row.Email != nil {
		d.Email = row.Email
	}
	gs := d.Groups()
	for g, vals := range row.Groups() {
		if gs[g] == nil {
			gs[g] = map[string]any{}
		}
		maps.Copy(gs[g], vals)
	}
	d.SetGroups(gs)
	for _, t := range row.Tags {
		if !slices.Contains(d.Tags, t) {
			d.Tags = append(d.Tags, t)
		}
	}
	return d, nil
}

// phonesOf are the row's phone numbers as SaveWith adds them (numbers the contact lacks).
func phonesOf(in []contacts.PhoneInput) []contacts.Phone {
	out := make([]contacts.Phone, len(in))
	for i, p := range in {
		out[i] = contacts.Phone{Number: p.Number}
		if p.Type != nil {
			out[i].Type = *p.Type
		}
	}
	return out
}
