package main

import (
	"context"
	"fmt"
	"io"
)

// insurerSetEmail runs `insurer set-email --vu N --email ADDRESS`: the address correspondence
// cases to that insurer are routed to (an empty --email clears it).
func (e env) insurerSetEmail(ctx context.Context, args []string) error {
	svc, done, err := e.operatorService()
	if err != nil {
		return err
	}
	defer done()
	fs := e.flags("insurer set-email")
	asJSON := fs.Bool("json", false, "print JSON")
	vu := fs.String("vu", "", "GDV VU number")
	email := fs.String("email", "", "correspondence address (empty clears it)")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if *vu == "" {
		return fmt.Errorf("insurer set-email: --vu is required")
	}
	ins, err := svc.SetInsurerEmail(ctx, *vu, *email)
	if err != nil {
		return explain(err)
	}
	return e.print(*asJSON, ins, func(w io.Writer) {
		addr := ins.CorrespondenceEmail
		if addr == "" {
			addr = "(no correspondence address)"
		}
		fmt.Fprintf(w, "insurer %s  %s  %s\n", ins.VUNumber, ins.Name, addr)
	})
}
