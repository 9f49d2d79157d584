package contacts

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/extref"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// MaxBulk is the most items of POST /contacts/bulk (spec: Limits).
const MaxBulk = 100

// BulkItemResult is one item's outcome, in request order: created or updated with the
// contact's id, or failed with the problem a single upsert would have answered.
type BulkItemResult struct {
	Index  int            `json:"index"`
	Status string         `json:"status"` // created, updated, failed
	ID     *string        `json:"id"`
	Error  *httpx.Problem `json:"error"`
}

// bulk handles POST /contacts/bulk: each item is an upsert by its externalReference, run
// independently inside the request's transaction (a savepoint per item: a failed item leaves
// no trace and does not stop the others). Answers 200 with every item's result.
func (h *Handler) bulk(c *fiber.Ctx) error {
	var body struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := httpx.Decode(c, &body); err != nil {
		return err
	}
	if n := len(body.Items); n < 1 || n > MaxBulk {
		return errs.InvalidField("items", "invalid_length", fmt.Sprintf("must hold 1 to %d items", MaxBulk))
	}
	out := make([]BulkItemResult, len(body.Items))
	for i, raw := range body.Items {
		out[i] = BulkItemResult{Index: i}
		var id string
		var created bool
		err := tenancy.Savepoint(c.UserContext(), func() (err error) {
			id, created, err = h.bulkItem(c, raw)
			return err
		})
		if err != nil {
			p := httpx.ToProblem(err)
			if p.Status >= 500 {
				return fmt.Errorf("bulk item %d: %w", i, err)
			}
			p.Instance, p.RequestID = c.Path(), httpx.RequestID(c)
			out[i].Status, out[i].Error = "failed", &p
			continue
		}
		out[i].ID = &id
		out[i].Status = "updated"
		if created {
			out[i].Status = "created"
		}
	}
	return c.JSON(fiber.Map{"data": out})
}

// bulkItem upserts one item: {externalReference: {source, externalId}} merged with a
// ContactUpsert.
func (h *Handler) bulkItem(c *fiber.Ctx, raw json.RawMessage) (string, bool, error) {
	var patch map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&patch); err != nil || patch == nil {
		return "", false, errs.InvalidField("item", "invalid_type", "must be an object")
	}
	refRaw, _ := json.Marshal(patch["externalReference"])
	delete(patch, "externalReference")
	var ref schematype.ExternalRef
	var v errs.Invalid
	if err := json.Unmarshal(refRaw, &ref); err != nil || ref.Source == "" || ref.ExternalID == "" {
		v.Add("externalReference", "required", "needs source and externalId")
	} else {
		extref.Check(&v, []schematype.ExternalRef{ref})
	}
	if err := v.Err(); err != nil {
		return "", false, err
	}
	docRaw, _ := json.Marshal(patch)
	var d Doc
	strict := json.NewDecoder(bytes.NewReader(docRaw))
	strict.DisallowUnknownFields()
	if err := strict.Decode(&d); err != nil {
		return "", false, errs.InvalidField("item", "invalid_item", err.Error())
	}
	ct, created, err := h.svc.Upsert(c.UserContext(), ref, d, patch)
	if err != nil {
		return "", false, err
	}
	return ct.ID.String(), created, nil
}
