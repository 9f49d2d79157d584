package contracts

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contract"
	"github.com/brokerdesk/brokerdesk/ent/insurer"
	"github.com/brokerdesk/brokerdesk/ent/schema"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// ListFilter narrows GET /contracts. Nil fields do not filter.
type ListFilter struct {
	ContactID    *uuid.UUID
	InsurerID    *uuid.UUID
	Type         *string
	Status       *string
	UpdatedSince *time.Time
}

// parseListFilter reads the query of GET /contracts; every bad parameter is listed. binding
// names the filters for the cursor.
func parseListFilter(c *fiber.Ctx, v *errs.Invalid) (f ListFilter, binding string) {
	f.ContactID = httpx.QueryUUID(c, v, "contactId")
	f.InsurerID = httpx.QueryUUID(c, v, "insurerId")
	if s := c.Query("type"); s != "" {
		_, known := gdv.Sparte(s)
		v.Check("type", known, "unknown_type", "is not a contract type (see GET /contract-types)")
		t := strings.Clone(s)
		f.Type = &t
	}
	if s := c.Query("status"); s != "" {
		v.Check("status", slices.Contains(schema.ContractStatuses, s), "invalid_enum",
			"must be one of "+strings.Join(schema.ContractStatuses, ", "))
		st := strings.Clone(s)
		f.Status = &st
	}
	if s := c.Query("updatedSince"); s != "" {
		t, ok := httpx.ParseTime(s)
		v.Check("updatedSince", ok, "invalid_datetime", "must be an RFC 3339 timestamp (without offset: Europe/Berlin)")
		if ok {
			f.UpdatedSince = &t
		}
	}
	parts := []string{"contracts", "contactId=" + idString(f.ContactID), "insurerId=" + idString(f.InsurerID),
		"type=" + ptr.Deref(f.Type), "status=" + ptr.Deref(f.Status)}
	if f.UpdatedSince != nil {
		parts = append(parts, "updatedSince="+f.UpdatedSince.UTC().Format(time.RFC3339Nano))
	}
	return f, strings.Join(parts, "&")
}

func idString(id *uuid.UUID) string {
	if id == nil {
		return ""
	}
	return id.String()
}

// List returns up to limit+1 contracts matching f, oldest first (createdAt, then id), after
// the sort key after.
func (s *Service) List(ctx context.Context, f ListFilter, after []string, limit int) ([]Contract, error) {
	q := tenancy.Client(ctx).Contract.Query()
	if f.ContactID != nil {
		q.Where(contract.ContactID(*f.ContactID))
	}
	if f.InsurerID != nil {
		q.Where(contract.InsurerID(*f.InsurerID))
	}
	if f.Type != nil {
		q.Where(contract.Type(*f.Type))
	}
	if f.Status != nil {
		q.Where(contract.StatusEQ(contract.Status(*f.Status)))
	}
	if f.UpdatedSince != nil {
		q.Where(contract.UpdatedAtGTE(*f.UpdatedSince))
	}
	keyset, err := httpx.AfterCreated(after)
	if err != nil {
		return nil, err
	}
	if keyset != nil {
		q.Where(keyset)
	}
	rows, err := q.Order(ent.Asc(contract.FieldCreatedAt), ent.Asc(contract.FieldID)).Limit(limit + 1).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list contracts: %w", err)
	}
	ids := make([]uuid.UUID, 0, len(rows))
	for _, c := range rows {
		ids = append(ids, c.InsurerID)
	}
	ins, err := tenancy.Client(ctx).Insurer.Query().Where(insurer.IDIn(ids...)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read insurers: %w", err)
	}
	byID := map[uuid.UUID]*ent.Insurer{}
	for _, i := range ins {
		byID[i.ID] = i
	}
	out := make([]Contract, len(rows))
	for i, c := range rows {
		out[i] = Contract{Contract: c, Insurer: byID[c.InsurerID]}
	}
	return out, nil
}

// Insurers returns the catalog, by name, optionally only the entry of one VU number.
func (s *Service) Insurers(ctx context.Context, vuNumber string) ([]InsurerView, error) {
	q := tenancy.Client(ctx).Insurer.Query()
	if vuNumber != "" {
		q.Where(insurer.VuNumber(vuNumber))
	}
	rows, err := q.Order(ent.Asc(insurer.FieldName), ent.Asc(insurer.FieldVuNumber)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list insurers: %w", err)
	}
	out := make([]InsurerView, len(rows))
	for i, r := range rows {
		out[i] = newInsurerView(r)
	}
	return out, nil
}

// Types returns the contract types: the GDV Sparten with their labels.
func Types() []TypeView {
	sp := gdv.Sparten()
	out := make([]TypeView, len(sp))
	for i, c := range sp {
		out[i] = TypeView{Code: c.Code, Label: c.De, LabelEn: c.En}
	}
	return out
}

// jsonRound is v after a JSON round trip, as a JSON column gives it back.
func jsonRound(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}
