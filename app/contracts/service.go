package contracts

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/extref"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/ent/contract"
	"github.com/brokerdesk/brokerdesk/ent/insurer"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/ent/user"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// RefResource is the resource name of contracts in the external_refs lookup table.
const RefResource = "contract"

// Service runs the contract use cases for the company pinned in ctx, each in the caller's
// transaction (tenancy.Client). Portfolio transfers write through it too.
type Service struct{ events *events.Service }

// NewService returns the service.
func NewService(ev *events.Service) *Service { return &Service{events: ev} }

// PaymentsPerYear is how many payments a year a frequency makes; 0 for single (and unknown):
// a single premium has no annual amount.
func PaymentsPerYear(freq string) int64 {
	switch freq {
	case "monthly":
		return 12
	case "quarterly":
		return 4
	case "half-yearly":
		return 2
	case "yearly":
		return 1
	}
	return 0
}

// AnnualPremium is premium × payments a year; nil without premium, frequency or for single.
func AnnualPremium(premium *schematype.Money, freq *string) *schematype.Money {
	if premium == nil || freq == nil || PaymentsPerYear(*freq) == 0 {
		return nil
	}
	m := schematype.MoneyOf(premium.Decimal().Mul(decimal.NewFromInt(PaymentsPerYear(*freq))))
	return &m
}

// withInsurer is c as the service returns it: with its insurer (the edge), loaded unless it
// is already. A row an update saved comes back without edges; when its insurer is the one of
// the row before (known), that one is taken over instead of read again.
func withInsurer(ctx context.Context, c *ent.Contract, known *ent.Insurer) (Contract, error) {
	if c.Edges.Insurer == nil && known != nil && known.ID == c.InsurerID {
		c.Edges.Insurer = known
	}
	if c.Edges.Insurer == nil {
		ins, err := c.QueryInsurer().Only(ctx)
		if err != nil {
			return Contract{}, fmt.Errorf("read insurer of contract %s: %w", c.ID, err)
		}
		c.Edges.Insurer = ins
	}
	return Contract{c}, nil
}

// Get reads one contract with its insurer. Another company's contract is not found.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (Contract, error) {
	c, err := tenancy.Client(ctx).Contract.Query().Where(contract.ID(id)).WithInsurer().Only(ctx)
	if err != nil {
		return Contract{}, errs.FromEnt(err, "contract %s", id)
	}
	return Contract{c}, nil
}

// Lock reads one contract with its insurer and locks the contract's row (not the catalog's) to
// the end of the transaction.
func (s *Service) Lock(ctx context.Context, id uuid.UUID) (*ent.Contract, error) {
	c, err := tenancy.Client(ctx).Contract.Query().Where(contract.ID(id)).WithInsurer().ForUpdate().Only(ctx)
	if err != nil {
		return nil, errs.FromEnt(err, "contract %s", id)
	}
	return c, nil
}

// Extra is what an import writes beside the fields of Input. Only the portfolio import
// (app/portfolio) fills it; the HTTP handlers pass Extra{}, and no request body is decoded into
// it (it has no JSON names, Input is what handlers decode).
type Extra struct {
	Source  *schematype.ImportSource
	Details []map[string]any
	// Checked says the caller has established in this transaction, seeing every contract,
	// that the contact, insurer and owner exist and that no other contract holds the key or
	// the external references (the portfolio commit's batch lookups): Create then skips
	// these reads, five round trips a contract.
	//
	// Why a trust flag is safe here: an HTTP client can neither
	// set it (above) nor make it true. The import sets it only from its own batch index, read
	// in the batch's transaction, and only when the transfer's credential sees every contract
	// (tenancy.VisibilityAll) and the transfer's owner exists; the uploaded file decides what
	// is looked up, never whether the lookup happened. What the skipped reads would refuse, the
	// database refuses anyway, in the company's rows only: the unique index on (company,
	// insurer, policy number, type), the unique external_refs lookup and the composite
	// company-scoped foreign keys of contact and owner (a race is a failed batch, never a
	// duplicate or a reference into another company). The reads exist for clear 409/422
	// answers, which an import reports per line before it commits. A separate import-only
	// Create would hold the same three reads behind one more name; not worth a second path.
	Checked bool
}

// Create stores a contract and records contract.created.
func (s *Service) Create(ctx context.Context, in Input, x Extra) (Contract, error) {
	if !x.Checked {
		if err := s.writable(ctx, in, uuid.Nil); err != nil {
			return Contract{}, err
		}
	}
	q := tenancy.Client(ctx).Contract.Create().SetContactID(uuid.MustParse(*in.ContactID))
	apply(q.Mutation(), in)
	applyExtra(q.Mutation(), x)
	if len(in.ExternalReferences) > 0 {
		q.SetExternalReferences(in.ExternalReferences)
	}
	c, err := q.Save(ctx)
	if err != nil {
		return Contract{}, fmt.Errorf("create contract: %w", err)
	}
	out, err := withInsurer(ctx, c, nil)
	if err != nil {
		return Contract{}, err
	}
	if err := s.record(ctx, "contract.created", out.View()); err != nil {
		return Contract{}, err
	}
	return out, nil
}

// apply writes the fields of in (validated) to m; nil optional fields are cleared.
func apply(m *ent.ContractMutation, in Input) {
	m.SetContactID(uuid.MustParse(*in.ContactID))
	m.SetInsurerID(uuid.MustParse(*in.InsurerID))
	m.SetPolicyNumber(strings.TrimSpace(*in.PolicyNumber))
	m.SetType(*in.Type)
	m.SetStatus(contract.Status(*in.Status))
	m.SetStatusCode(ptr.Deref(in.StatusCode))
	date := func(set func(time.Time)) func(string) {
		return func(s string) {
			t, _ := time.Parse(dateLayout, s)
			set(t)
		}
	}
	setOrClear(in.StartDate, date(m.SetStartDate), m.ClearStartDate)
	setOrClear(in.EndDate, date(m.SetEndDate), m.ClearEndDate)
	setOrClear(in.MainRenewalDate, date(m.SetMainRenewalDate), m.ClearMainRenewalDate)
	var premium *schematype.Money
	if in.Premium != nil {
		p, _ := schematype.ParseMoney(*in.Premium)
		premium = &p
	}
	setOrClear(premium, m.SetPremium, m.ClearPremium)
	setOrClear(in.PaymentFrequency, func(f string) { m.SetPaymentFrequency(contract.PaymentFrequency(f)) }, m.ClearPaymentFrequency)
	setOrClear(AnnualPremium(premium, in.PaymentFrequency), m.SetAnnualPremium, m.ClearAnnualPremium)
	setOrClear(in.OwnerID, func(id string) { m.SetOwnerID(uuid.MustParse(id)) }, m.ClearOwnerID)
}

// setOrClear writes an optional field of the input: set(*v) when given, clear() when nil.
func setOrClear[T any](v *T, set func(T), clear func()) {
	if v == nil {
		clear()
		return
	}
	set(*v)
}

// applyExtra writes what an import gives beside the input: nil fields leave the stored ones.
func applyExtra(m *ent.ContractMutation, x Extra) {
	if x.Source != nil {
		m.SetSource(x.Source)
	}
	if x.Details != nil {
		m.SetDetails(x.Details)
	}
}

// writable checks in before a create (self uuid.Nil) or an update of the contract self, in the
// order the answers take precedence: 422 for records in names that do not exist, 409 for an
// external reference or a key another contract holds.
func (s *Service) writable(ctx context.Context, in Input, self uuid.UUID) error {
	if err := s.resolve(ctx, in); err != nil {
		return err
	}
	if err := refsFree(ctx, in.ExternalReferences, self); err != nil {
		return err
	}
	return s.keyFree(ctx, in, self)
}

// resolve checks that the contact, insurer and owner in names exist (422 naming the field).
func (s *Service) resolve(ctx context.Context, in Input) error {
	db := tenancy.Client(ctx)
	var v errs.Invalid
	ok, err := db.Contact.Query().Where(contact.ID(uuid.MustParse(*in.ContactID))).Exist(ctx)
	if err != nil {
		return fmt.Errorf("read contract contact: %w", err)
	}
	v.Check("contactId", ok, "unknown_contact", "is not a contact of this company")
	ok, err = db.Insurer.Query().Where(insurer.ID(uuid.MustParse(*in.InsurerID))).Exist(ctx)
	if err != nil {
		return fmt.Errorf("read contract insurer: %w", err)
	}
	v.Check("insurerId", ok, "unknown_insurer", "is not an insurer of the catalog (see GET /insurers)")
	if in.OwnerID != nil {
		ok, err := db.User.Query().Where(user.ID(uuid.MustParse(*in.OwnerID))).Exist(ctx)
		if err != nil {
			return fmt.Errorf("read contract owner: %w", err)
		}
		v.Check("ownerId", ok, "unknown_user", "is not a user of this company (see GET /users)")
	}
	return v.Err()
}

// keyFree returns 409 contract_exists when another contract than self has in's insurer,
// policy number and type, visible to the caller or not (the key is the company's: an invisible
// holder of it would otherwise make the unique index fail as a 500). The unique index decides
// races; this gives the usual case a clear answer.
func (s *Service) keyFree(ctx context.Context, in Input, self uuid.UUID) error {
	var taken bool
	err := tenancy.ReadCompanyWide(ctx, func() error {
		rows, err := tenancy.Client(ctx).QueryContext(ctx, keyTakenQuery,
			uuid.MustParse(*in.InsurerID), strings.TrimSpace(*in.PolicyNumber), *in.Type, self)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := rows.Scan(&taken); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	if err != nil {
		return fmt.Errorf("check contract key: %w", err)
	}
	if taken {
		return errs.Conflict("contract_exists",
			"a contract with this insurer, policy number and type exists already")
	}
	return nil
}

// refsFree returns 409 external_reference_taken when another contract than self carries one of
// refs (extref.Free).
func refsFree(ctx context.Context, refs []schematype.ExternalRef, self uuid.UUID) error {
	return extref.Free(ctx, RefResource, refs, self)
}

// normalized is in as it would be stored, for telling whether a change changes anything.
func normalized(in Input) Input {
	out := in
	if in.PolicyNumber != nil {
		p := strings.TrimSpace(*in.PolicyNumber)
		out.PolicyNumber = &p
	}
	ids := func(s *string) *string {
		if s == nil {
			return nil
		}
		id := uuid.MustParse(*s).String()
		return &id
	}
	out.ContactID, out.InsurerID, out.OwnerID = ids(in.ContactID), ids(in.InsurerID), ids(in.OwnerID)
	if in.Premium != nil {
		p, _ := schematype.ParseMoney(*in.Premium)
		ps := p.String()
		out.Premium = &ps
	}
	if in.StatusCode != nil && *in.StatusCode == "" {
		out.StatusCode = nil
	}
	if len(in.ExternalReferences) == 0 {
		out.ExternalReferences = nil
	}
	return out
}

// Same reports whether writing in and x to c would change nothing: the fields of in, and the
// details of x when given (an import's source alone is no change).
func Same(c *ent.Contract, in Input, x Extra) bool {
	return reflect.DeepEqual(normalized(InputOf(c)), normalized(in)) &&
		(x.Details == nil || reflect.DeepEqual(jsonRound(x.Details), jsonRound(c.Details)))
}

// Update replaces the writable fields of c (locked by Lock) with in and records
// contract.updated. A change that changes nothing changes neither version nor updatedAt and
// records no event; x (import source, details) alone does not count as a change unless set.
func (s *Service) Update(ctx context.Context, c *ent.Contract, in Input, x Extra) (Contract, error) {
	if Same(c, in, x) {
		return withInsurer(ctx, c, nil)
	}
	if err := s.writable(ctx, in, c.ID); err != nil {
		return Contract{}, err
	}
	u := c.Update()
	apply(u.Mutation(), in)
	if !reflect.DeepEqual(normalized(Input{ExternalReferences: in.ExternalReferences}).ExternalReferences,
		normalized(Input{ExternalReferences: c.ExternalReferences}).ExternalReferences) {
		if len(in.ExternalReferences) > 0 {
			u.SetExternalReferences(in.ExternalReferences)
		} else {
			u.ClearExternalReferences()
		}
	}
	applyExtra(u.Mutation(), x)
	saved, err := u.Save(ctx)
	if err != nil {
		return Contract{}, fmt.Errorf("update contract %s: %w", c.ID, err)
	}
	out, err := withInsurer(ctx, saved, c.Edges.Insurer)
	if err != nil {
		return Contract{}, err
	}
	if err := s.record(ctx, "contract.updated", out.View()); err != nil {
		return Contract{}, err
	}
	return out, nil
}

// Delete removes c (locked by Lock, with its insurer) and records contract.deleted with the
// contract as it was.
func (s *Service) Delete(ctx context.Context, c *ent.Contract) error {
	full, err := withInsurer(ctx, c, nil)
	if err != nil {
		return err
	}
	// The contract's commission entries become unmatched (the income stays on its statement):
	// the foreign key's ON DELETE SET NULL clears contract and contact but not matched_by, which
	// tenant_commission_entries_matched requires to go with them, so a booked contract could not
	// be deleted (nor its contact, nor erased: TestVisibility_ErasedContactUnreachable). The
	// statement's matched count follows, as when an entry is unlinked by hand.
	if _, err := tenancy.Client(ctx).ExecContext(ctx, `WITH u AS (UPDATE commission_entries
			SET contract_id = NULL, contact_id = NULL, matched_by = NULL, version = version + 1, updated_at = now()
			WHERE contract_id = $1 RETURNING statement_id)
		UPDATE commission_statements s SET matched_count = s.matched_count - n.c
		FROM (SELECT statement_id, count(*) AS c FROM u GROUP BY statement_id) n WHERE s.id = n.statement_id`, c.ID); err != nil {
		return fmt.Errorf("unmatch the commission entries of contract %s: %w", c.ID, err)
	}
	if err := tenancy.Client(ctx).Contract.DeleteOne(c).Exec(ctx); err != nil {
		return fmt.Errorf("delete contract %s: %w", c.ID, err)
	}
	return s.record(ctx, "contract.deleted", full.View())
}

// record records an event about v with the owner its contact has now (the caller sees the
// contact: it just read or wrote the contract through the visibility layer).
func (s *Service) record(ctx context.Context, typ string, v View) error {
	owners, err := tenancy.Client(ctx).Contact.Query().Where(contact.ID(v.ContactID)).Select(contact.FieldOwnerID).All(ctx)
	if err != nil {
		return fmt.Errorf("read owner of contact %s: %w", v.ContactID, err)
	}
	if len(owners) == 1 {
		v.contactOwner = owners[0].OwnerID
	}
	return s.events.Record(ctx, typ, v)
}

// DeleteOfContact deletes the contracts of a contact that is being deleted, each with its
// contract.deleted (subscribers learn of every contract that goes, as when it is deleted
// alone). contacts.Service.Delete calls it, with the contact locked, before the contact's row
// goes (the foreign key would cascade silently); the caller sees the contact, so its contracts.
func (s *Service) DeleteOfContact(ctx context.Context, contactID uuid.UUID) error {
	cs, err := tenancy.Client(ctx).Contract.Query().Where(contract.ContactID(contactID)).WithInsurer().
		Order(ent.Asc(contract.FieldCreatedAt), ent.Asc(contract.FieldID)).ForUpdate().All(ctx)
	if err != nil {
		return fmt.Errorf("read contracts of contact %s: %w", contactID, err)
	}
	for _, c := range cs {
		if err := s.Delete(ctx, c); err != nil {
			return err
		}
	}
	return nil
}
