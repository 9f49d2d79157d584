package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/delegations"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
)

// flags builds a FlagSet that reports errors instead of exiting.
func (e env) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	return fs
}

// parse parses flags that may stand before or after positional arguments
// (`key deactivate sk_live_ab12 --json`) and returns the positional ones.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func parseID(flagName, s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, fmt.Errorf("--%s must be a UUID", flagName)
	}
	return id, nil
}

// explain turns service errors into one readable line for the terminal.
func explain(err error) error {
	if inv, ok := err.(*errs.Invalid); ok {
		var parts []string
		for _, f := range inv.Errors {
			parts = append(parts, f.Field+" "+f.Detail)
		}
		return fmt.Errorf("%s", strings.Join(parts, "; "))
	}
	return err
}

func (e env) company(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("company: want create, features or list")
	}
	svc, done, err := e.operatorService()
	if err != nil {
		return err
	}
	defer done()
	fs := e.flags("company " + args[0])
	asJSON := fs.Bool("json", false, "print JSON")
	name := fs.String("name", "", "company name")
	features := fs.String("features", "", "comma-separated licensed features")
	companyID := fs.String("company", "", "company id")
	if _, err := parse(fs, args[1:]); err != nil {
		return err
	}
	show := func(c operator.Company) func(io.Writer) {
		return func(w io.Writer) {
			fmt.Fprintf(w, "company %s  %q  sandbox %s  features %s\n", c.ID, c.Name, c.SandboxID, strings.Join(c.Features, ","))
		}
	}
	switch args[0] {
	case "create":
		c, err := svc.CreateCompany(ctx, *name, list(*features))
		if err != nil {
			return explain(err)
		}
		return e.print(*asJSON, c, show(c))
	case "features":
		id, err := parseID("company", *companyID)
		if err != nil {
			return err
		}
		c, err := svc.SetFeatures(ctx, id, list(*features))
		if err != nil {
			return explain(err)
		}
		return e.print(*asJSON, c, show(c))
	case "list":
		cs, err := svc.ListCompanies(ctx)
		if err != nil {
			return err
		}
		return e.print(*asJSON, cs, func(w io.Writer) {
			for _, c := range cs {
				show(c)(w)
			}
		})
	}
	return fmt.Errorf("company: unknown subcommand %q", args[0])
}

func (e env) user(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "create" {
		return fmt.Errorf("user: want create")
	}
	svc, done, err := e.operatorService()
	if err != nil {
		return err
	}
	defer done()
	fs := e.flags("user create")
	asJSON := fs.Bool("json", false, "print JSON")
	companyID := fs.String("company", "", "company id")
	email := fs.String("email", "", "e-mail address")
	first := fs.String("first-name", "", "first name")
	last := fs.String("last-name", "", "last name")
	role := fs.String("role", "agent", "admin, manager or agent")
	if _, err := parse(fs, args[1:]); err != nil {
		return err
	}
	id, err := parseID("company", *companyID)
	if err != nil {
		return err
	}
	u, err := svc.CreateUser(ctx, operator.NewUser{CompanyID: id, Email: *email, FirstName: *first, LastName: *last, Role: *role})
	if err != nil {
		return explain(err)
	}
	return e.print(*asJSON, u, func(w io.Writer) {
		fmt.Fprintf(w, "user %s  %s  role %s  (sandbox twin %s)\n", u.ID, u.Email, u.Role, u.SandboxID)
	})
}

func (e env) key(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("key: want create, list, deactivate or delete")
	}
	svc, done, err := e.operatorService()
	if err != nil {
		return err
	}
	defer done()
	fs := e.flags("key " + args[0])
	asJSON := fs.Bool("json", false, "print JSON")
	companyID := fs.String("company", "", "company id")
	userID := fs.String("user", "", "user id (binds the key to the user)")
	kind := fs.String("kind", "secret", "secret or publishable")
	envName := fs.String("env", "live", "live or test")
	scopes := fs.String("scopes", "", "comma-separated scopes (secret keys; default all)")
	domains := fs.String("domains", "", "comma-separated allowed redirect domains (publishable keys)")
	name := fs.String("name", "", "a name to recognise the key by")
	pos, err := parse(fs, args[1:])
	if err != nil {
		return err
	}
	showKey := func(k operator.Key) func(io.Writer) {
		return func(w io.Writer) {
			user := "-"
			if k.UserID != nil {
				user = k.UserID.String()
			}
			fmt.Fprintf(w, "%s  %s  %-11s %-4s %-8s company %s  user %s  scopes %s  domains %s\n",
				k.ID, k.Prefix, k.Kind, k.Env, k.Status, k.CompanyID, user, strings.Join(k.Scopes, ","), strings.Join(k.AllowedDomains, ","))
		}
	}
	switch args[0] {
	case "create":
		id, err := parseID("company", *companyID)
		if err != nil {
			return err
		}
		in := operator.NewKeyInput{CompanyID: id, Kind: *kind, Env: *envName, Scopes: list(*scopes),
			AllowedDomains: list(*domains), Name: *name}
		if *userID != "" {
			uid, err := parseID("user", *userID)
			if err != nil {
				return err
			}
			in.UserID = &uid
		}
		k, err := svc.CreateKey(ctx, in)
		if err != nil {
			return explain(err)
		}
		return e.print(*asJSON, k, func(w io.Writer) {
			showKey(k)(w)
			fmt.Fprintf(w, "key: %s\n(shown once: only its hash is stored)\n", k.Secret)
		})
	case "list":
		var id uuid.UUID
		if *companyID != "" {
			if id, err = parseID("company", *companyID); err != nil {
				return err
			}
		}
		keys, err := svc.ListKeys(ctx, id)
		if err != nil {
			return explain(err)
		}
		return e.print(*asJSON, keys, func(w io.Writer) {
			for _, k := range keys {
				showKey(k)(w)
			}
		})
	case "deactivate":
		if len(pos) != 1 {
			return fmt.Errorf("key deactivate: name one key by id or prefix")
		}
		k, err := svc.DeactivateKey(ctx, pos[0])
		if err != nil {
			return explain(err)
		}
		return e.print(*asJSON, k, showKey(k))
	case "delete":
		if len(pos) != 1 {
			return fmt.Errorf("key delete: name one key by id or prefix")
		}
		if err := svc.DeleteKey(ctx, pos[0]); err != nil {
			return explain(err)
		}
		return e.print(*asJSON, map[string]string{"deleted": pos[0]}, func(w io.Writer) {
			fmt.Fprintf(w, "deleted %s\n", pos[0])
		})
	}
	return fmt.Errorf("key: unknown subcommand %q", args[0])
}

// delegation handles `brokerdesk delegation create|list|delete`: who sees whose contacts.
func (e env) delegation(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("delegation: want create, list or delete")
	}
	svc, done, err := e.operatorService()
	if err != nil {
		return err
	}
	defer done()
	fs := e.flags("delegation " + args[0])
	asJSON := fs.Bool("json", false, "print JSON")
	companyID := fs.String("company", "", "company id (live or sandbox)")
	from := fs.String("from", "", "delegating user id (whose contacts are shared)")
	to := fs.String("to", "", "delegate user id (who sees them)")
	until := fs.String("until", "", "end of the delegation, RFC 3339 (default: until deleted)")
	pos, err := parse(fs, args[1:])
	if err != nil {
		return err
	}
	co, err := parseID("company", *companyID)
	if err != nil {
		return err
	}
	delegator, err := parseID("from", *from)
	if err != nil {
		return err
	}
	show := func(d delegations.View) func(io.Writer) {
		return func(w io.Writer) {
			end := "-"
			if d.ValidUntil != nil {
				end = d.ValidUntil.Format(time.RFC3339)
			}
			fmt.Fprintf(w, "%s  from %s  to %s  until %s  active %v\n", d.ID, d.DelegatorID, d.DelegateID, end, d.Active)
		}
	}
	switch args[0] {
	case "create":
		delegate, err := parseID("to", *to)
		if err != nil {
			return err
		}
		in := delegations.CreateInput{DelegateID: &delegate}
		if *until != "" {
			t, err := time.Parse(time.RFC3339, *until)
			if err != nil {
				return fmt.Errorf("--until must be an RFC 3339 time")
			}
			in.ValidUntil = &t
		}
		d, err := svc.CreateDelegation(ctx, co, delegator, in)
		if err != nil {
			return explain(err)
		}
		return e.print(*asJSON, d, show(d))
	case "list":
		ds, err := svc.ListDelegations(ctx, co, delegator)
		if err != nil {
			return explain(err)
		}
		return e.print(*asJSON, ds, func(w io.Writer) {
			for _, d := range ds {
				show(d)(w)
			}
		})
	case "delete":
		if len(pos) != 1 {
			return fmt.Errorf("delegation delete: name one delegation id")
		}
		id, err := uuid.Parse(pos[0])
		if err != nil {
			return fmt.Errorf("delegation delete: %q is not a delegation id", pos[0])
		}
		if err := svc.DeleteDelegation(ctx, co, delegator, id); err != nil {
			return explain(err)
		}
		return e.print(*asJSON, map[string]string{"deleted": id.String()}, func(w io.Writer) {
			fmt.Fprintf(w, "deleted %s\n", id)
		})
	}
	return fmt.Errorf("delegation: unknown subcommand %q", args[0])
}

// insurer runs `insurer set`, `insurer set-email` and `insurer list`: the platform's insurer catalog.
func (e env) insurer(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "set-email" {
		return e.insurerSetEmail(ctx, args[1:])
	}
	if len(args) == 0 || (args[0] != "set" && args[0] != "list") {
		return fmt.Errorf("insurer: want set, set-email or list")
	}
	svc, done, err := e.operatorService()
	if err != nil {
		return err
	}
	defer done()
	fs := e.flags("insurer " + args[0])
	asJSON := fs.Bool("json", false, "print JSON")
	vu := fs.String("vu", "", "GDV VU number")
	name := fs.String("name", "", "insurer name")
	if _, err := parse(fs, args[1:]); err != nil {
		return err
	}
	if args[0] == "list" {
		rows, err := svc.ListInsurers(ctx)
		if err != nil {
			return explain(err)
		}
		return e.print(*asJSON, rows, func(w io.Writer) {
			for _, r := range rows {
				fmt.Fprintf(w, "%-5s  %s\n", r.VUNumber, r.Name)
			}
		})
	}
	if *vu == "" || *name == "" {
		return fmt.Errorf("insurer set: --vu and --name are required")
	}
	ins, err := svc.SetInsurer(ctx, *vu, *name)
	if err != nil {
		return explain(err)
	}
	return e.print(*asJSON, ins, func(w io.Writer) { fmt.Fprintf(w, "insurer %s  %s\n", ins.VUNumber, ins.Name) })
}
