package httpx

import (
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/paging"
)

// The one list pipeline. A list declares a filter struct F, a parser for it and a keyset; its
// service answers List(ctx, f, page); the rest is here:
//
//	// list handles GET /tasks: Paged, by due date (none last), then id.
//	func (h *Handler) list(c *fiber.Ctx) error {
//		return httpx.ServeList(c, h.pager, "tasks", parseListFilter, h.svc.List, byDue, NewView)
//	}
//
// The cursor is bound to the list's name, the company and the canonical JSON of the
// normalised filter (Binding), so it is never written by hand per list.

// FilterParser reads a list's filter from the request: bad query parameters go into v (422,
// listed with those of limit and cursor); a returned error ends the request as it is (a bad
// path id is 400).
type FilterParser[F any] func(c *fiber.Ctx, v *errs.Invalid) (F, error)

// ParseList reads a list request: the filter and the page. Every bad parameter of both is
// one 422.
func ParseList[F any](c *fiber.Ctx, p *Pager, name string, parse FilterParser[F]) (F, PageQuery, error) {
	var v errs.Invalid
	f, err := parse(c, &v)
	if err != nil {
		return f, PageQuery{}, err
	}
	page, err := p.Parse(c, Binding(name, f))
	var inv *errs.Invalid
	if errors.As(err, &inv) {
		v.Errors = append(v.Errors, inv.Errors...)
	} else if err != nil {
		return f, page, err
	}
	return f, page, v.Err()
}

// ServeList answers a list request: ParseList, the service's fetch, WritePage.
func ServeList[F, R, V any](c *fiber.Ctx, p *Pager, name string, parse FilterParser[F],
	fetch func(context.Context, F, paging.Page) ([]R, error), order paging.Keyset[R], view func(R) V) error {
	return ServeListFor(c, p, name, parse, fetch, func(F) (paging.Keyset[R], func(R) (V, error)) {
		return order, Plain(view)
	})
}

// ServeListFor is ServeList for a list whose order and view its filter chooses (contacts:
// sort picks the keyset, fields the groups the view decrypts, which may fail).
func ServeListFor[F, R, V any](c *fiber.Ctx, p *Pager, name string, parse FilterParser[F],
	fetch func(context.Context, F, paging.Page) ([]R, error), shape func(F) (paging.Keyset[R], func(R) (V, error))) error {
	f, page, err := ParseList(c, p, name, parse)
	if err != nil {
		return err
	}
	rows, err := fetch(c.UserContext(), f, page.Page)
	if err != nil {
		return err
	}
	order, view := shape(f)
	return WritePage(c, page, rows, order.Key, view)
}

// NoFilter is the parser of a list without filters.
func NoFilter(*fiber.Ctx, *errs.Invalid) (struct{}, error) { return struct{}{}, nil }

// Plain makes a view that cannot fail fit WritePage.
func Plain[R, V any](view func(R) V) func(R) (V, error) {
	return func(r R) (V, error) { return view(r), nil }
}

// Binding names a list and its filter for the cursor: name, then the canonical JSON of the
// normalised filter (times in UTC, slices sorted, nil and empty alike, fields tagged json:"-"
// left out: they shape the answer, not the rows).
func Binding(name string, filter any) string {
	b, err := json.Marshal(normalise(reflect.ValueOf(filter)))
	if err != nil {
		panic(fmt.Sprintf("httpx: filter of %s: %v", name, err)) // a declaration error
	}
	return name + "?" + string(b)
}

var timeType = reflect.TypeOf(time.Time{})

// normalise turns a filter into plain JSON values with one spelling per meaning.
func normalise(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	if v.Type() == timeType {
		return paging.TimeKey(v.Interface().(time.Time))
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return normalise(v.Elem())
	}
	if m, ok := v.Interface().(encoding.TextMarshaler); ok { // uuid.UUID and friends
		b, err := m.MarshalText()
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	switch v.Kind() {
	case reflect.Struct:
		out := map[string]any{}
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			out[name] = normalise(v.Field(i))
		}
		return out
	case reflect.Slice, reflect.Array:
		if v.Len() == 0 {
			return nil
		}
		items := make([]string, v.Len())
		for i := range items {
			b, _ := json.Marshal(normalise(v.Index(i)))
			items[i] = string(b)
		}
		slices.Sort(items)
		out := make([]json.RawMessage, len(items))
		for i, s := range items {
			out[i] = json.RawMessage(s)
		}
		return out
	case reflect.Map:
		if v.Len() == 0 {
			return nil
		}
		out := map[string]any{}
		for _, k := range v.MapKeys() {
			out[fmt.Sprint(k.Interface())] = normalise(v.MapIndex(k))
		}
		return out
	}
	return v.Interface()
}
