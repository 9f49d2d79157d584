package contacts

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/customfielddefinition"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// MaxCustomFields is the number of custom field definitions a company may have (spec: Limits).
const MaxCustomFields = 10

// CustomFieldInput is CustomFieldDefinitionInput, the body of POST /custom-fields.
type CustomFieldInput struct {
	Key      string   `json:"key"`
	Label    string   `json:"label"`
	DataType string   `json:"dataType"`
	Options  []string `json:"options,omitempty"`
	Position *int     `json:"position,omitempty"`
}

var reCustomKey = regexp.MustCompile(`^[a-z][a-zA-Z0-9_]{0,49}$`)

// CustomDataTypes are the types a custom field may have.
var CustomDataTypes = []string{"string", "number", "boolean", "date", "enum"}

// Validate checks the body of POST /custom-fields.
func (in CustomFieldInput) Validate() error {
	var v errs.Invalid
	v.Check("key", reCustomKey.MatchString(in.Key), "invalid_key",
		"must start with a lower-case letter and hold 1-50 letters, digits or _")
	n := utf8.RuneCountInString(strings.TrimSpace(in.Label))
	v.Check("label", n >= 1 && n <= 100, "invalid_length", "must have 1 to 100 characters")
	check.Text(&v, "label", in.Label)
	v.Check("dataType", slices.Contains(CustomDataTypes, in.DataType), "invalid_enum",
		"must be one of "+strings.Join(CustomDataTypes, ", "))
	if in.DataType == "enum" {
		v.Check("options", len(in.Options) >= 1 && len(in.Options) <= 50, "invalid_length", "an enum needs 1 to 50 options")
	} else {
		v.Check("options", len(in.Options) == 0, "not_allowed", "only enum fields have options")
	}
	for i, o := range in.Options {
		n := utf8.RuneCountInString(o)
		v.Check(fmt.Sprintf("options.%d", i), n >= 1 && n <= 100, "invalid_length", "must have 1 to 100 characters")
		v.Check(fmt.Sprintf("options.%d", i), !slices.Contains(in.Options[:i], o), "duplicate", "repeats an earlier option")
	}
	if in.Position != nil {
		v.Check("position", *in.Position >= 0 && *in.Position <= 1000, "out_of_range", "must be from 0 to 1000")
	}
	return v.Err()
}

// CustomFieldView is the CustomFieldDefinition resource.
type CustomFieldView struct {
	ID        uuid.UUID `json:"id"`
	Key       string    `json:"key"`
	Label     string    `json:"label"`
	DataType  string    `json:"dataType"`
	Options   []string  `json:"options"`
	Position  int       `json:"position"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

func customView(d *ent.CustomFieldDefinition) CustomFieldView {
	opts := d.Options
	if opts == nil {
		opts = []string{}
	}
	return CustomFieldView{ID: d.ID, Key: d.Key, Label: d.Label, DataType: string(d.DataType), Options: opts,
		Position: d.Position, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
}

// CustomFields lists the company's definitions in display order (position, then creation).
func (s *Service) CustomFields(ctx context.Context) ([]CustomFieldView, error) {
	rows, err := tenancy.Client(ctx).CustomFieldDefinition.Query().
		Order(ent.Asc(customfielddefinition.FieldPosition), ent.Asc(customfielddefinition.FieldCreatedAt), ent.Asc(customfielddefinition.FieldID)).
		All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list custom fields: %w", err)
	}
	out := make([]CustomFieldView, len(rows))
	for i, d := range rows {
		out[i] = customView(d)
	}
	return out, nil
}

// CreateCustomField stores a definition: 409 custom_field_limit when the company has
// MaxCustomFields, 409 custom_field_key_taken for a key in use. Definitions are serialised per
// company by locking the company row, so two concurrent creates cannot make eleven.
func (s *Service) CreateCustomField(ctx context.Context, in CustomFieldInput) (CustomFieldView, error) {
	db := tenancy.Client(ctx)
	company, _ := tenancy.CompanyID(ctx)
	if _, err := db.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('custom_fields:' || $1, 0))", company.String()); err != nil {
		return CustomFieldView{}, fmt.Errorf("lock custom fields: %w", err)
	}
	n, err := db.CustomFieldDefinition.Query().Count(ctx)
	if err != nil {
		return CustomFieldView{}, fmt.Errorf("count custom fields: %w", err)
	}
	if n >= MaxCustomFields {
		return CustomFieldView{}, errs.Conflict("custom_field_limit", "the company has %d custom fields, the most it may have", MaxCustomFields)
	}
	taken, err := db.CustomFieldDefinition.Query().Where(customfielddefinition.Key(in.Key)).Exist(ctx)
	if err != nil {
		return CustomFieldView{}, fmt.Errorf("check custom field key: %w", err)
	}
	if taken {
		return CustomFieldView{}, errs.Conflict("custom_field_key_taken", "a custom field with the key %s exists", in.Key)
	}
	pos := n
	if in.Position != nil {
		pos = *in.Position
	}
	q := db.CustomFieldDefinition.Create().SetKey(in.Key).SetLabel(strings.TrimSpace(in.Label)).
		SetDataType(customfielddefinition.DataType(in.DataType)).SetPosition(pos)
	if in.Options != nil {
		q.SetOptions(in.Options)
	}
	d, err := q.Save(ctx)
	if err != nil {
		return CustomFieldView{}, fmt.Errorf("create custom field: %w", err)
	}
	return customView(d), nil
}

// checkCustom validates custom field values by their definitions: an unknown key is 422
// unknown_custom_field, a value of the wrong type invalid_type (customFields.<key>).
func (s *Service) checkCustom(ctx context.Context, vals map[string]any) error {
	if len(vals) == 0 {
		return nil
	}
	defs, err := s.CustomFields(ctx)
	if err != nil {
		return err
	}
	var v errs.Invalid
	for _, k := range sortedKeys(vals) {
		path := "customFields." + k
		i := slices.IndexFunc(defs, func(d CustomFieldView) bool { return d.Key == k })
		if i < 0 {
			v.Add(path, "unknown_custom_field", "is not a custom field of this company (see GET /custom-fields)")
			continue
		}
		d, val := defs[i], vals[k]
		if val == nil {
			continue
		}
		switch d.DataType {
		case "string":
			str, ok := val.(string)
			v.Check(path, ok, "invalid_type", "must be a string")
			if ok {
				check.Len(&v, path, &str, MaxCustomStr)
			}
		case "number":
			_, ok := asNumber(val)
			v.Check(path, ok, "invalid_type", "must be a number")
		case "boolean":
			_, ok := val.(bool)
			v.Check(path, ok, "invalid_type", "must be a boolean")
		case "date":
			str, ok := val.(string)
			_, err := time.Parse(time.DateOnly, str)
			v.Check(path, ok && err == nil, "invalid_date", "must be a date (YYYY-MM-DD)")
		case "enum":
			str, ok := val.(string)
			v.Check(path, ok && slices.Contains(d.Options, str), "invalid_enum", "must be one of "+strings.Join(d.Options, ", "))
		}
	}
	return v.Err()
}

func asNumber(val any) (float64, bool) {
	switch n := val.(type) {
	case float64:
		return n, true
	case interface{ Float64() (float64, error) }:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
