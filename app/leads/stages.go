package leads

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/check"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/app/platform/ptr"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/leadstage"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Stage bounds and the color of a stage created without one.
const (
	MaxStageName = 100
	DefaultColor = "#94a3b8"
)

// StageView is the LeadStage resource.
type StageView struct {
	ID        uuid.UUID `json:"id"`
	Key       string    `json:"key"`
	Name      string    `json:"name"`
	Color     string    `json:"color"`
	Position  int       `json:"position"`
	IsFinal   bool      `json:"isFinal"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// NewStageView is the LeadStage resource of st.
func NewStageView(st *ent.LeadStage) StageView {
	return StageView{ID: st.ID, Key: st.Key, Name: st.Name, Color: st.Color, Position: st.Position,
		IsFinal: st.IsFinal, CreatedAt: st.CreatedAt, UpdatedAt: st.UpdatedAt}
}

// StageInput is the body of POST /lead-stages.
type StageInput struct {
	Name     *string `json:"name"`
	Color    *string `json:"color"`
	Position *int    `json:"position"`
	IsFinal  bool    `json:"isFinal"`
}

var colorRE = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)

// Validate checks the body of POST /lead-stages.
func (in StageInput) Validate() error {
	var v errs.Invalid
	name := strings.TrimSpace(ptr.Deref(in.Name))
	v.Require("name", name != "")
	v.Check("name", utf8.RuneCountInString(name) <= MaxStageName, "too_long", fmt.Sprintf("at most %d characters", MaxStageName))
	v.Check("name", name == "" || stageKey(name) != "", "invalid_name", "needs at least one letter or digit")
	check.Text(&v, "name", name)
	v.Check("color", in.Color == nil || colorRE.MatchString(*in.Color), "invalid_color", "must be a hex color such as #3b82f6")
	v.Check("position", in.Position == nil || *in.Position >= 0, "out_of_range", "must be 0 or more")
	return v.Err()
}

// stageKey is the key of a company stage: its name in lower case, German umlauts spelled out,
// every other run of characters but a-z and 0-9 one underscore ("Termin vereinbart" →
// "termin_vereinbart").
func stageKey(name string) string {
	s := strings.NewReplacer("ä", "ae", "ö", "oe", "ü", "ue", "ß", "ss").Replace(strings.ToLower(name))
	var b strings.Builder
	gap := false
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if gap && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			gap = false
			continue
		}
		gap = true
	}
	key := b.String()
	if len(key) > MaxStageName {
		key = strings.TrimRight(key[:MaxStageName], "_")
	}
	return key
}

// Stages lists the company's stages in board order: position, then creation.
func (s *Service) Stages(ctx context.Context) ([]*ent.LeadStage, error) {
	rows, err := tenancy.Client(ctx).LeadStage.Query().
		Order(ent.Asc(leadstage.FieldPosition), ent.Asc(leadstage.FieldCreatedAt), ent.Asc(leadstage.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list lead stages: %w", err)
	}
	return rows, nil
}

// CreateStage adds a stage. Its key is derived from the name; a stage whose name or key
// exists already (compared case-insensitively) is 409 stage_exists. Without a position it
// goes after the last stage but converted.
func (s *Service) CreateStage(ctx context.Context, in StageInput) (*ent.LeadStage, error) {
	name := strings.TrimSpace(*in.Name)
	key := stageKey(name)
	all, err := s.Stages(ctx)
	if err != nil {
		return nil, err
	}
	pos := 0
	for _, st := range all {
		if strings.EqualFold(st.Name, name) || st.Key == key {
			return nil, errs.Conflict("stage_exists", "the stage %q (key %s) exists already", st.Name, st.Key)
		}
		if st.Key != StageConverted && st.Position >= pos {
			pos = st.Position + 1
		}
	}
	if in.Position != nil {
		pos = *in.Position
	}
	color := DefaultColor
	if in.Color != nil {
		color = *in.Color
	}
	st, err := tenancy.Client(ctx).LeadStage.Create().SetKey(key).SetName(name).SetColor(color).
		SetPosition(pos).SetIsFinal(in.IsFinal).Save(ctx)
	if ent.IsConstraintError(err) { // a concurrent create with the same key
		return nil, errs.Conflict("stage_exists", "a stage with the key %s exists already", key)
	}
	if err != nil {
		return nil, fmt.Errorf("create lead stage: %w", err)
	}
	return st, nil
}

// listStages handles GET /lead-stages.
func (h *Handler) listStages(c *fiber.Ctx) error {
	rows, err := h.svc.Stages(c.UserContext())
	if err != nil {
		return err
	}
	return httpx.Data(c, rows, NewStageView)
}
