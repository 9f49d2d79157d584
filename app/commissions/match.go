package commissions

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/formats/commission"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// match links the unmatched entries of statement to the company's contracts by insurer and
// policy key (commission.PolicyKey on both sides: one rule, computed in Go, no stored column).
// Per insurer of the statement's entries it reads that insurer's contracts once, keeps those
// whose key an entry has, and links all entries of a key in one UPDATE. Two contracts of one
// insurer with the same key are ambiguous: their entries stay unmatched with an issue, to be
// linked by hand (PATCH /commission-entries/{entryId}). It runs in the worker's transaction,
// which sees every contract of the company.
func match(ctx context.Context, statement uuid.UUID, now time.Time) ([]schematype.CommissionIssue, error) {
	db := tenancy.Client(ctx)
	rows, err := db.QueryContext(ctx, matchKeysQuery, statement)
	if err != nil {
		return nil, fmt.Errorf("read entry keys: %w", err)
	}
	wanted := map[uuid.UUID]map[string]bool{}
	for rows.Next() {
		var ins uuid.UUID
		var key string
		if err := rows.Scan(&ins, &key); err != nil {
			rows.Close()
			return nil, err
		}
		if wanted[ins] == nil {
			wanted[ins] = map[string]bool{}
		}
		wanted[ins][key] = true
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	var issues []schematype.CommissionIssue
	for ins, keys := range wanted {
		found, ambiguous, err := contractsByKey(ctx, ins, keys)
		if err != nil {
			return nil, err
		}
		for key := range ambiguous {
			issues = append(issues, schematype.CommissionIssue{Severity: commission.SeverityWarning, Code: "ambiguous_policy",
				Message: fmt.Sprintf("policy key %s names more than one contract of the insurer: its entries stay unmatched", key)})
		}
		if len(found) == 0 {
			continue
		}
		ks, ids, contacts := make([]string, 0, len(found)), make([]string, 0, len(found)), make([]string, 0, len(found))
		for k, c := range found {
			ks, ids, contacts = append(ks, k), append(ids, c.id.String()), append(contacts, c.contact.String())
		}
		if _, err := db.ExecContext(ctx, matchUpdate, statement, ins, ks, ids, now, contacts); err != nil {
			return nil, fmt.Errorf("match entries: %w", err)
		}
	}
	return issues, nil
}

type contractRef struct{ id, contact uuid.UUID }

// contractsByKey reads the contracts of insurer and returns those whose key is in keys, and
// the keys more than one contract has.
func contractsByKey(ctx context.Context, insurer uuid.UUID, keys map[string]bool) (map[string]contractRef, map[string]bool, error) {
	rows, err := tenancy.Client(ctx).QueryContext(ctx, insurerContractsQuery, insurer)
	if err != nil {
		return nil, nil, fmt.Errorf("read contracts of insurer %s: %w", insurer, err)
	}
	defer rows.Close()
	found, ambiguous := map[string]contractRef{}, map[string]bool{}
	for rows.Next() {
		var c contractRef
		var number string
		if err := rows.Scan(&c.id, &c.contact, &number); err != nil {
			return nil, nil, err
		}
		k := commission.PolicyKey(number)
		if !keys[k] {
			continue
		}
		if prev, dup := found[k]; dup && prev.id != c.id {
			ambiguous[k] = true
			continue
		}
		found[k] = c
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	for k := range ambiguous {
		delete(found, k)
	}
	return found, ambiguous, nil
}
