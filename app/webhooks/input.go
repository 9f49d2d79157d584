package webhooks

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

// AllEvents subscribes an endpoint to every event type its credential may receive.
const AllEvents = "*"

// Input is the body of POST /webhook-endpoints (WebhookEndpointInput) and, merged with the
// stored endpoint, of PATCH (WebhookEndpointPatch).
type Input struct {
	URL         *string  `json:"url"`
	Events      []string `json:"events"`
	Description *string  `json:"description"`
	Enabled     *bool    `json:"enabled"`
}

// validate checks every field with g deciding which URLs are allowed, and normalises events
// (sorted, without duplicates).
func (in *Input) validate(g Guard) error {
	var v errs.Invalid
	if in.URL == nil {
		v.Require("url", false)
	} else if p := g.CheckURL(*in.URL); p != nil {
		v.Add("url", p.code, p.detail)
	}
	switch {
	case len(in.Events) == 0:
		v.Add("events", "required", "list the event types to receive (see GET /event-types), or [\"*\"] for all")
	case len(in.Events) > 100:
		v.Add("events", "too_many", "at most 100 entries")
	default:
		for _, t := range in.Events {
			switch {
			case t == AllEvents && len(in.Events) > 1:
				v.Add("events", "wildcard_not_alone", `"*" already means every type; send it alone`)
			case t != AllEvents && !events.Known(t):
				v.Add("events", "invalid_event_type", t+" is not an event type (see GET /event-types)")
			}
		}
	}
	if d := in.Description; d != nil {
		v.Check("description", utf8.RuneCountInString(*d) <= 500, "too_long", "must be at most 500 characters")
		v.Check("description", !strings.ContainsRune(*d, 0), "invalid_character", "must not contain NUL characters")
	}
	if err := v.Err(); err != nil {
		return err
	}
	slices.Sort(in.Events)
	in.Events = slices.Compact(in.Events)
	return nil
}

// wants reports whether an endpoint subscribed to types receives events of type t.
func wants(types []string, t string) bool {
	return slices.Contains(types, AllEvents) || slices.Contains(types, t)
}
