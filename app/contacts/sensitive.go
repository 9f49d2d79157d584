package contacts

import (
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// Selection is which groups an answer carries: the `fields` parameter narrowed to what the
// credential may read (sensitive groups only with contacts.sensitive:read).
type Selection map[string]bool

// View is the Contact resource of c for an answer: the selected groups, sensitive ones
// decrypted (the service holds the keys; handlers call it to build their answer).
func (s *Service) View(c Contact, sel Selection) (View, error) {
	v := NewView(c)
	cat := FieldCatalog()
	for _, g := range cat.GroupNames() {
		if !sel[g] {
			delete(v.Groups, g)
			continue
		}
		if cat.Sensitive(g) {
			if !cat.Applies(g, string(c.Type)) {
				v.Groups[g] = nil
				continue
			}
			vals, err := s.open(c.Contact, g)
			if err != nil {
				return View{}, err
			}
			v.Groups[g] = vals
		}
	}
	return v, nil
}

func aad(c uuid.UUID, company uuid.UUID, group string) []byte {
	return []byte(company.String() + "/" + c.String() + "/" + group)
}

// open decrypts the sensitive group g of c ({} when nothing is stored).
func (s *Service) open(c *ent.Contact, g string) (map[string]any, error) {
	out := map[string]any{}
	sealed, ok := c.Sensitive[g]
	if !ok {
		return out, nil
	}
	plain, err := s.keys.Open(sealed, aad(c.ID, c.CompanyID, g))
	if err != nil {
		return nil, fmt.Errorf("open %s of contact %s: %w", g, c.ID, err)
	}
	if err := json.Unmarshal(plain, &out); err != nil {
		return nil, fmt.Errorf("decode %s of contact %s: %w", g, c.ID, err)
	}
	return out, nil
}

// seal encrypts the sensitive groups of gs for contact id of company.
func (s *Service) seal(id, company uuid.UUID, gs map[string]map[string]any) (map[string]schematype.Sealed, error) {
	out := map[string]schematype.Sealed{}
	cat := FieldCatalog()
	for g, vals := range gs {
		if !cat.Sensitive(g) || len(vals) == 0 {
			continue
		}
		plain, err := json.Marshal(vals)
		if err != nil {
			return nil, err
		}
		out[g] = s.keys.Seal(plain, aad(id, company, g))
	}
	return out, nil
}
