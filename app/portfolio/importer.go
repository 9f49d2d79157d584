package portfolio

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/contracts"
	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/extref"
	"github.com/brokerdesk/brokerdesk/app/platform/identity"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/ent/contract"
	"github.com/brokerdesk/brokerdesk/ent/externalref"
	"github.com/brokerdesk/brokerdesk/ent/insurer"
	"github.com/brokerdesk/brokerdesk/ent/portfoliotransfer"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/ent/user"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Actions of a contract in a transfer.
const (
	actCreate    = "created"
	actUpdate    = "updated"
	actUnchanged = "unchanged"
	actSkip      = "skipped"
)

// importer plans and writes the contracts of one transfer. Matching order (spec): the external
// reference (source + the insurer's key of the contract), then insurer, policy number and type
// (the unique key), for people the external reference of the person key (personKey).
type importer struct {
	m        *Module
	t        *ent.PortfolioTransfer
	insurers map[string]uuid.UUID // VU number → insurer id (uuid.Nil: not in the catalog)
	idx      *batchIndex          // the commit batch's matches (nil: one query per lookup)
}

// batchIndex holds what the lookups of plan and contactFor would find for the contracts of one
// commit batch, read with a few queries for the whole batch instead of three per contract.
// The batch's own writes keep it current (a file may name a contract or a person twice).
type batchIndex struct {
	contractRefs map[string]uuid.UUID        // contract external id → contract id
	contracts    map[uuid.UUID]*ent.Contract // contracts found by reference
	byKey        map[string]*ent.Contract    // insurer|policy number|type → contract
	contactRefs  map[string]uuid.UUID        // person key → contact id
	checked      bool                        // every contract visible and the owner exists: contracts.Extra.Checked
}

func contractKey(insID uuid.UUID, policy, typ string) string {
	return insID.String() + "|" + policy + "|" + typ
}

// prefetch reads the batch's matches into im.idx within the batch's transaction: the
// contracts' external references, the contracts carrying them, the contracts with their
// (insurer, policy number, type), the policyholders' references, and whether the owner exists.
// Insurers are ensured again for each batch (its transaction may be the first to see them).
func (im *importer) prefetch(ctx context.Context, batch []*gdv.Contract) error {
	im.insurers = map[string]uuid.UUID{}
	idx := &batchIndex{contractRefs: map[string]uuid.UUID{}, contracts: map[uuid.UUID]*ent.Contract{},
		byKey: map[string]*ent.Contract{}, contactRefs: map[string]uuid.UUID{}}
	var refs, persons, policies []string
	var insIDs []uuid.UUID
	seenIns := map[uuid.UUID]bool{}
	for _, c := range batch {
		if keyProblem(c) != "" {
			continue
		}
		insID, err := im.insurerID(ctx, c.VUNumber, true)
		if err != nil {
			return err
		}
		refs = append(refs, im.contractRef(c).ExternalID)
		policies = append(policies, c.PolicyNumber)
		if !seenIns[insID] {
			seenIns[insID] = true
			insIDs = append(insIDs, insID)
		}
		if p := holder(c); p != nil {
			persons = append(persons, personKey(c, p))
		}
	}
	db := tenancy.Client(ctx)
	if len(refs) > 0 {
		rs, err := db.ExternalRef.Query().Where(externalref.Resource(contracts.RefResource), externalref.Source(im.t.Source),
			externalref.ExternalIDIn(refs...)).All(ctx)
		if err != nil {
			return fmt.Errorf("match contracts: %w", err)
		}
		ids := make([]uuid.UUID, 0, len(rs))
		for _, r := range rs {
			idx.contractRefs[r.ExternalID] = r.ResourceID
			ids = append(ids, r.ResourceID)
		}
		if len(ids) > 0 {
			cs, err := db.Contract.Query().Where(contract.IDIn(ids...)).All(ctx)
			if err != nil {
				return fmt.Errorf("match contracts: %w", err)
			}
			for _, c := range cs {
				idx.contracts[c.ID] = c
			}
		}
		cs, err := db.Contract.Query().Where(contract.InsurerIDIn(insIDs...), contract.PolicyNumberIn(policies...)).All(ctx)
		if err != nil {
			return fmt.Errorf("match contracts: %w", err)
		}
		for _, c := range cs {
			idx.byKey[contractKey(c.InsurerID, c.PolicyNumber, c.Type)] = c
		}
	}
	if len(persons) > 0 {
		rs, err := db.ExternalRef.Query().Where(externalref.Resource("contact"), externalref.Source(im.t.Source),
			externalref.ExternalIDIn(persons...)).All(ctx)
		if err != nil {
			return fmt.Errorf("match persons: %w", err)
		}
		for _, r := range rs {
			idx.contactRefs[r.ExternalID] = r.ResourceID
		}
	}
	vis, _ := tenancy.VisibilityOf(ctx)
	idx.checked = vis == tenancy.VisibilityAll
	if idx.checked && im.t.OwnerID != nil {
		ok, err := db.User.Query().Where(user.ID(*im.t.OwnerID)).Exist(ctx)
		if err != nil {
			return fmt.Errorf("read transfer owner: %w", err)
		}
		idx.checked = ok
	}
	im.idx = idx
	return nil
}

func newImporter(m *Module, t *ent.PortfolioTransfer) *importer {
	return &importer{m: m, t: t, insurers: map[string]uuid.UUID{}}
}

// contractRef is the external reference an import gives a contract: the transfer's source
// and the insurer's key (VU number, policy number, Sparte).
func (im *importer) contractRef(c *gdv.Contract) schematype.ExternalRef {
	return schematype.ExternalRef{Source: im.t.Source, ExternalID: truncate(c.VUNumber+":"+c.PolicyNumber+":"+c.Sparte.Code, 255)}
}

// holder is the person a contract belongs to: its (first) policyholder, else its first person.
func holder(c *gdv.Contract) *gdv.Person {
	if hs := c.PolicyHolders(); len(hs) > 0 {
		return hs[0]
	}
	if len(c.Persons) > 0 {
		return &c.Persons[0]
	}
	return nil
}

// personKey identifies the contract's policyholder across files and insurers without ever
// making two people one: name and complete birth date (the spec's third rule), else the
// insurer's customer number, else the contract itself (a person without birth date or
// customer number is the holder of this contract only; masked files show why: igor_110120
// has two different "xxxxxxxx, 00000000").
func personKey(c *gdv.Contract, p *gdv.Person) string {
	last, first := p.LastName, p.FirstName
	if p.Kind == gdv.KindBusiness {
		last, first = p.CompanyName, ""
	}
	if last == "" {
		last = p.Name1
	}
	switch {
	case p.BirthDate.Complete() && p.Kind != gdv.KindBusiness:
		return truncate("person:"+identity.NameKey(last)+"|"+identity.NameKey(first)+"|"+p.BirthDate.String(), 255)
	case p.CustomerNumber != "":
		return truncate("customer:"+c.VUNumber+":"+p.CustomerNumber, 255)
	}
	return truncate("holder:"+c.VUNumber+":"+c.PolicyNumber+":"+c.Sparte.Code, 255)
}

func truncate(s string, n int) string {
	for utf8.RuneCountInString(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// insurerID returns the catalog id of a VU number; with ensure the number is added when
// missing (insurer_ensure), else uuid.Nil.
func (im *importer) insurerID(ctx context.Context, vu string, ensure bool) (uuid.UUID, error) {
	if id, ok := im.insurers[vu]; ok && (id != uuid.Nil || !ensure) {
		return id, nil
	}
	db := tenancy.Client(ctx)
	if ensure {
		rows, err := db.QueryContext(ctx, ensureInsurer, vu)
		if err != nil {
			return uuid.Nil, fmt.Errorf("add insurer %s: %w", vu, err)
		}
		defer rows.Close()
		var id uuid.UUID
		for rows.Next() {
			if err := rows.Scan(&id); err != nil {
				return uuid.Nil, err
			}
		}
		im.insurers[vu] = id
		return id, rows.Err()
	}
	ins, err := db.Insurer.Query().Where(insurer.VuNumber(vu)).Only(ctx)
	if ent.IsNotFound(err) {
		im.insurers[vu] = uuid.Nil
		return uuid.Nil, nil
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("read insurer %s: %w", vu, err)
	}
	im.insurers[vu] = ins.ID
	return ins.ID, nil
}

// plan is what a contract of the file comes to.
type plan struct {
	action   string
	reason   string // why it is skipped
	existing *ent.Contract
	in       contracts.Input
	x        contracts.Extra
	person   *gdv.Person
	key      string // person key, for a new contract
}

// keyProblem is why a contract cannot be matched or stored ("": none).
func keyProblem(c *gdv.Contract) string {
	switch {
	case c.VUNumber == "" || c.PolicyNumber == "":
		return "contract_incomplete"
	case utf8.RuneCountInString(c.PolicyNumber) > contracts.MaxPolicyNumber || len(c.Sparte.Code) != 3 || len(c.VUNumber) > 5:
		return "contract_key_invalid"
	}
	return ""
}

// plan decides a contract's action. ensure (commit) adds unknown insurers to the catalog.
func (im *importer) plan(ctx context.Context, c *gdv.Contract, line int64, ensure bool) (plan, error) {
	var p plan
	if reason := keyProblem(c); reason != "" {
		return plan{action: actSkip, reason: reason}, nil
	}
	insID, err := im.insurerID(ctx, c.VUNumber, ensure)
	if err != nil {
		return p, err
	}
	p.in = im.input(c, insID)
	p.x = contracts.Extra{Details: details(c),
		Source: &schematype.ImportSource{TransferID: im.t.ID.String(), Format: string(im.t.Format), Source: im.t.Source,
			Line: line, ImportedAt: im.m.d.Now().UTC()}}
	ref := im.contractRef(c)
	db := tenancy.Client(ctx)
	if insID != uuid.Nil && im.idx != nil {
		if id, ok := im.idx.contractRefs[ref.ExternalID]; ok {
			p.existing = im.idx.contracts[id]
		} else {
			p.existing = im.idx.byKey[contractKey(insID, c.PolicyNumber, c.Sparte.Code)]
		}
		// The index saw every contract; a policy number with outer spaces (stored trimmed)
		// is left to Create's own checks.
		p.x.Checked = im.idx.checked && c.PolicyNumber == strings.TrimSpace(c.PolicyNumber)
	} else if insID != uuid.Nil {
		r, err := db.ExternalRef.Query().Where(externalref.Resource(contracts.RefResource), externalref.Source(ref.Source),
			externalref.ExternalID(ref.ExternalID)).Only(ctx)
		switch {
		case err == nil:
			p.existing, err = db.Contract.Get(ctx, r.ResourceID)
		case ent.IsNotFound(err):
			p.existing, err = db.Contract.Query().Where(contract.InsurerID(insID), contract.PolicyNumber(c.PolicyNumber),
				contract.Type(c.Sparte.Code)).Only(ctx)
		}
		if err != nil && !ent.IsNotFound(err) {
			return p, fmt.Errorf("match contract: %w", err)
		}
	}
	if p.existing == nil {
		p.person = holder(c)
		if p.person == nil {
			return plan{action: actSkip, reason: "policyholder_missing"}, nil
		}
		p.key = personKey(c, p.person)
		p.action = actCreate
		p.in.ExternalReferences = []schematype.ExternalRef{ref}
		p.in.OwnerID = idString(im.t.OwnerID)
		return p, nil
	}
	p.in = im.merge(p.existing, p.in, ref)
	p.action = actUpdate
	if contracts.Same(p.existing, p.in, p.x) {
		p.action = actUnchanged
	}
	return p, nil
}

func idString(id *uuid.UUID) *string {
	if id == nil {
		return nil
	}
	s := id.String()
	return &s
}

// input is the contract's fields as the file states them.
func (im *importer) input(c *gdv.Contract, insID uuid.UUID) contracts.Input {
	str := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	date := func(d gdv.Date) *string {
		if t, ok := d.Time(); ok && d.Complete() {
			return str(t.Format("2006-01-02"))
		}
		return nil
	}
	status := c.Status
	if status == "" {
		status = "active" // Vertragsstatus 9 or unknown: kept in statusCode, the contract is held active
	}
	in := contracts.Input{InsurerID: str(insID.String()), PolicyNumber: str(c.PolicyNumber), Type: str(c.Sparte.Code),
		Status: &status, StartDate: date(c.StartDate), EndDate: date(c.EndDate), MainRenewalDate: date(c.MainRenewalDate),
		PaymentFrequency: str(c.PaymentFrequency)}
	if code := strings.TrimSpace(c.StatusCode.Code); code != "" && len(code) <= 2 {
		in.StatusCode = &code
	}
	if in.StartDate != nil && in.EndDate != nil && *in.EndDate < *in.StartDate {
		in.EndDate = nil
	}
	if c.Premium != nil {
		if m, err := schematype.ParseMoney(c.Premium.String()); err == nil && !m.Decimal().IsNegative() {
			s := m.String()
			in.Premium = &s
		}
	}
	return in
}

// merge is the Input an update writes to existing: with writeMode overwrite every value the
// file has replaces the stored one (a value the file leaves empty keeps the stored one); with
// fill_empty_only only empty stored values are filled. The contact, owner and the other
// references of the contract stay.
func (im *importer) merge(existing *ent.Contract, file contracts.Input, ref schematype.ExternalRef) contracts.Input {
	out := contracts.InputOf(existing)
	fill := im.t.WriteMode == portfoliotransfer.WriteModeFillEmptyOnly
	set := func(dst **string, v *string) {
		if v != nil && (!fill || *dst == nil) {
			*dst = v
		}
	}
	if !fill {
		out.Status = file.Status
	}
	set(&out.StatusCode, file.StatusCode)
	set(&out.StartDate, file.StartDate)
	set(&out.EndDate, file.EndDate)
	set(&out.MainRenewalDate, file.MainRenewalDate)
	set(&out.Premium, file.Premium)
	set(&out.PaymentFrequency, file.PaymentFrequency)
	if out.StartDate != nil && out.EndDate != nil && *out.EndDate < *out.StartDate {
		out.EndDate = nil
	}
	if !slices.Contains(out.ExternalReferences, ref) && len(out.ExternalReferences) < extref.MaxRefs {
		out.ExternalReferences = append(slices.Clone(out.ExternalReferences), ref)
	}
	return out
}

// details are the contract's line-specific records as JSON objects.
func details(c *gdv.Contract) []map[string]any {
	out := []map[string]any{}
	b, err := json.Marshal(c.Details)
	if err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}

// contactFor returns the contact of the person key: the one carrying its external reference,
// else (create) a new contact made from p. found says whether it existed. A new contact is
// written through ent (tenant, version and external-reference hooks); the columns search and
// sorting key on (search_text, sort_name, email_key) come from the row itself in the database
// (trigger contacts_search_columns), as for every other path that writes a contact.
func (im *importer) contactFor(ctx context.Context, key string, p *gdv.Person, create bool) (uuid.UUID, bool, error) {
	db := tenancy.Client(ctx)
	ref := schematype.ExternalRef{Source: im.t.Source, ExternalID: key}
	if im.idx != nil {
		if id, ok := im.idx.contactRefs[key]; ok {
			return id, true, nil
		}
	} else {
		r, err := db.ExternalRef.Query().Where(externalref.Resource("contact"), externalref.Source(ref.Source),
			externalref.ExternalID(ref.ExternalID)).Only(ctx)
		if err == nil {
			return r.ResourceID, true, nil
		}
		if !ent.IsNotFound(err) {
			return uuid.Nil, false, fmt.Errorf("match person: %w", err)
		}
	}
	if !create {
		return uuid.Nil, false, nil
	}
	q := db.Contact.Create().SetExternalReferences([]schematype.ExternalRef{ref}).SetNillableOwnerID(im.t.OwnerID)
	if p.Kind == gdv.KindBusiness {
		name := p.CompanyName
		if name == "" {
			name = strings.TrimSpace(p.Name1 + " " + p.Name2)
		}
		q.SetType(contact.TypeBusiness).SetCompanyName(truncate(name, 200)).SetLastName(truncate(p.Name1, 100))
	} else {
		last := p.LastName
		if last == "" {
			last = p.Name1
		}
		q.SetType(contact.TypePrivate).SetFirstName(truncate(p.FirstName, 100)).SetLastName(truncate(last, 100))
	}
	for _, cm := range p.Communications {
		if cm.Kind == "email" && check.ValidEmail(cm.Value) && len(cm.Value) <= 255 {
			q.SetEmail(strings.TrimSpace(cm.Value))
			break
		}
	}
	ct, err := q.Save(ctx)
	if err != nil {
		return uuid.Nil, false, fmt.Errorf("create contact: %w", err)
	}
	if err := im.m.d.Events.Record(ctx, "contact.created", contacts.NewView(contacts.Contact{Contact: ct})); err != nil {
		return uuid.Nil, false, err
	}
	if im.idx != nil {
		im.idx.contactRefs[key] = ct.ID
	}
	return ct.ID, false, nil
}

// write carries out a plan inside the batch's transaction and returns the action taken.
func (im *importer) write(ctx context.Context, p plan) (string, bool, error) {
	switch p.action {
	case actCreate:
		id, found, err := im.contactFor(ctx, p.key, p.person, true)
		if err != nil {
			return "", false, err
		}
		s := id.String()
		p.in.ContactID = &s
		out, err := im.m.d.Contracts.Create(ctx, p.in, p.x)
		if err != nil {
			return "", false, err
		}
		im.remember(out.Contract)
		return actCreate, !found, nil
	case actUpdate:
		out, err := im.m.d.Contracts.Update(ctx, p.existing, p.in, p.x)
		if err != nil {
			return "", false, err
		}
		im.remember(out.Contract)
	}
	return p.action, false, nil
}

// remember puts a contract the batch wrote into the batch's index, as the lookups would now
// find it.
func (im *importer) remember(c *ent.Contract) {
	if im.idx == nil || c == nil {
		return
	}
	for _, r := range c.ExternalReferences {
		if r.Source == im.t.Source {
			im.idx.contractRefs[r.ExternalID] = c.ID
		}
	}
	im.idx.contracts[c.ID] = c
	im.idx.byKey[contractKey(c.InsurerID, c.PolicyNumber, c.Type)] = c
}
