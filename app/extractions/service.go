package extractions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/contracts"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/app/platform/points"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contractextraction"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Price is what one extraction costs: one point a document, whatever its pages (bounded by
// MaxPages), taken when it starts and refunded when it fails (docs/decisions/extraction.md).
const Price = 1

// AutoApplyThreshold is the confidence from which autoApply writes a field.
const AutoApplyThreshold = 0.75

// readable are the document types an extraction reads: PDFs (text layer or OCR) and scans.
var readable = []string{"application/pdf", "image/png", "image/jpeg", "image/tiff"}

// safetyDelay is when an extraction's job runs if nothing makes it run earlier: it is inserted
// scheduled before the request commits and made available right after the commit (as e-mail
// sends are: app/emails enqueue), so a process that dies in between loses no extraction.
const safetyDelay = 2 * time.Minute

// Start checks the document (visible, a PDF or an image) and the contract (visible, of the
// document's contact), takes the points (402), stores the queued extraction with its ledger
// line and queues its job, all in the request's transaction.
func (s *Service) Start(ctx context.Context, documentID uuid.UUID, in StartInput) (*ent.ContractExtraction, error) {
	company, ok := tenancy.CompanyID(ctx)
	if !ok {
		return nil, tenancy.ErrNoCompany
	}
	d, err := s.m.d.Docs.Get(ctx, documentID)
	if err != nil {
		return nil, err
	}
	base, _, _ := strings.Cut(d.ContentType, ";")
	if !containsFold(readable, strings.TrimSpace(base)) {
		return nil, &errs.Invalid{Errors: []errs.FieldError{{Field: "documentId", Code: "not_readable",
			Detail: "the document is " + d.ContentType + "; an extraction reads PDFs and images (PNG, JPEG, TIFF)"}}}
	}
	q := tenancy.Client(ctx).ContractExtraction.Create().SetDocumentID(d.ID).SetContactID(d.ContactID).
		SetNillableContractType(in.ContractType).SetAutoApply(in.AutoApply != nil && *in.AutoApply).
		SetPoints(Price).SetNillableCreatorID(tenancy.ActingUser(ctx))
	if in.ContractID != nil {
		c, err := s.m.d.Contracts.Get(ctx, uuid.MustParse(*in.ContractID))
		if err != nil {
			return nil, err
		}
		if c.ContactID != d.ContactID {
			return nil, &errs.Invalid{Errors: []errs.FieldError{{Field: "contractId", Code: "other_contact",
				Detail: "the contract belongs to another contact than the document"}}}
		}
		q.SetContractID(c.ID).SetContractVersion(int(c.Version))
	}
	if err := points.Take(ctx, Price, "an extraction costs %d point"); err != nil {
		return nil, err
	}
	e, err := q.Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("create extraction: %w", err)
	}
	if err := points.Charge(ctx, Price, "extraction", points.For{ExtractionID: &e.ID}); err != nil {
		return nil, err
	}
	if err := s.m.enqueue(ctx, company, e.ID); err != nil {
		return nil, err
	}
	return e, nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// enqueue inserts the extraction's job scheduled safetyDelay ahead, made available after the
// request commits and deleted when it rolls back.
func (m *Module) enqueue(ctx context.Context, company, id uuid.UUID) error {
	_, err := jobs.InsertAtCommit(ctx, m.queue, Args{CompanyID: company, ExtractionID: id}, Args{}.InsertOpts(),
		m.d.Now().Add(safetyDelay))
	return err
}

// Get reads one extraction. Another company's, or one of a contact the credential may not see,
// is not found.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (*ent.ContractExtraction, error) {
	e, err := tenancy.Client(ctx).ContractExtraction.Get(ctx, id)
	if err != nil {
		return nil, errs.FromEnt(err, "extraction %s", id)
	}
	return e, nil
}

// Apply writes the chosen fields (values override the extracted ones) to the extraction's
// contract, or to a new contract of the document's contact, through the contracts service
// (its validation: 422; its events). 409 when the extraction has not completed or its contract
// changed since the extraction started (or was last applied).
func (s *Service) Apply(ctx context.Context, id uuid.UUID, in ApplyInput) (contracts.Contract, error) {
	e, err := tenancy.Client(ctx).ContractExtraction.Query().Where(contractextraction.ID(id)).ForUpdate().Only(ctx)
	if err != nil {
		return contracts.Contract{}, errs.FromEnt(err, "extraction %s", id)
	}
	if e.Status != contractextraction.StatusCompleted {
		return contracts.Contract{}, errs.Conflict("not_completed", "the extraction is %s; apply a completed one", e.Status)
	}
	chosen := map[string]any{}
	var v errs.Invalid
	for _, k := range in.Fields {
		if raw, ok := in.Values[k]; ok {
			var x any
			_ = json.Unmarshal(raw, &x) // Validate checked it
			chosen[k] = x
			continue
		}
		f, ok := field(e.Fields, k)
		if !ok {
			v.Add("fields", "not_extracted", "field "+quote(k)+" was not found in the document; give it in values")
			continue
		}
		chosen[k] = f.Value
	}
	if err := v.Err(); err != nil {
		return contracts.Contract{}, err
	}
	out, err := s.m.write(ctx, e, chosen)
	if err != nil {
		return contracts.Contract{}, err
	}
	return out, nil
}

// field is the extracted field of key k.
func field(fs []schematype.ExtractedField, k string) (schematype.ExtractedField, bool) {
	for _, f := range fs {
		if f.Key == k {
			return f, true
		}
	}
	return schematype.ExtractedField{}, false
}

// write applies chosen to e's contract (locked; 409 contract_changed when its version is not
// the one e recorded) or creates one for e's contact (status active unless chosen), then
// records the contract and its version on e.
func (m *Module) write(ctx context.Context, e *ent.ContractExtraction, chosen map[string]any) (contracts.Contract, error) {
	var (
		out contracts.Contract
		err error
	)
	if e.ContractID == nil && e.ContractVersion != nil {
		// The target contract was deleted (contract_id SET NULL by its foreign key): writing a
		// new one instead would surprise the caller who named it.
		return out, errs.Conflict("contract_gone", "the extraction's contract was deleted")
	}
	if e.ContractID != nil {
		c, lerr := m.d.Contracts.Lock(ctx, *e.ContractID)
		if lerr != nil {
			if errors.Is(lerr, errs.ErrNotFound) {
				return out, errs.Conflict("contract_gone", "the extraction's contract %s was deleted", *e.ContractID)
			}
			return out, lerr
		}
		if e.ContractVersion == nil || int64(*e.ContractVersion) != c.Version {
			return out, errs.Conflict("contract_changed",
				"contract %s changed since the extraction started (version %d, now %d); start a new extraction",
				c.ID, deref(e.ContractVersion), c.Version)
		}
		in := contracts.InputOf(c)
		if err := merge(&in, chosen); err != nil {
			return out, err
		}
		if err := in.Validate(); err != nil {
			return out, err
		}
		if out, err = m.d.Contracts.Update(ctx, c, in, contracts.Extra{}); err != nil {
			return out, err
		}
	} else {
		contact := e.ContactID.String()
		status := "active"
		in := contracts.Input{ContactID: &contact, Status: &status}
		if err := merge(&in, chosen); err != nil {
			return out, err
		}
		if err := in.Validate(); err != nil {
			return out, err
		}
		if out, err = m.d.Contracts.Create(ctx, in, contracts.Extra{}); err != nil {
			return out, err
		}
	}
	err = tenancy.Client(ctx).ContractExtraction.UpdateOne(e).SetContractID(out.ID).SetContractVersion(int(out.Version)).
		SetAppliedAt(m.d.Now()).Exec(ctx)
	if err != nil {
		return out, fmt.Errorf("record apply of extraction %s: %w", e.ID, err)
	}
	return out, nil
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// merge sets the contract input's fields from chosen: strings as they are, numbers (a premium
// sent as 12.5) formatted, null clears an optional field; another type is a 422 naming the key.
func merge(in *contracts.Input, chosen map[string]any) error {
	var v errs.Invalid
	for k, x := range chosen {
		var s *string
		switch t := x.(type) {
		case nil:
		case string:
			s = &t
		case float64:
			f := strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", t), "0"), ".")
			s = &f
		default:
			v.Add("values."+k, "invalid_value", "must be a string or a number")
			continue
		}
		switch k {
		case KeyInsurer:
			in.InsurerID = s
		case KeyPolicyNumber:
			in.PolicyNumber = s
		case KeyType:
			in.Type = s
		case "status":
			in.Status = s
		case KeyStartDate:
			in.StartDate = s
		case KeyEndDate:
			in.EndDate = s
		case "mainRenewalDate":
			in.MainRenewalDate = s
		case KeyPremium:
			in.Premium = s
		case KeyPaymentFrequency:
			in.PaymentFrequency = s
		}
	}
	return v.Err()
}
