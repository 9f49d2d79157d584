package oauth

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// GrantView is the data of oauth_grant.revoked: one grant (an authorization of a client, all
// its access and refresh tokens, which share the grant id across refreshes).
type GrantView struct {
	ID         string     `json:"id"`
	ClientID   uuid.UUID  `json:"clientId"`
	ClientName string     `json:"clientName"`
	UserID     *uuid.UUID `json:"userId"`
	Scopes     []string   `json:"scopes"`
	// Reason: revocation_request (RFC 7009 by the client), token_reuse (a used authorization
	// code or a rotated refresh token came back: the grant is revoked as compromised).
	Reason    string    `json:"reason"`
	RevokedAt time.Time `json:"revokedAt"`
}

// Reasons of a grant's revocation.
const (
	ReasonRevocationRequest = "revocation_request"
	ReasonTokenReuse        = "token_reuse"
)

type revokeReasonKey struct{}

// withRevokeReason says why revocations made in ctx happen: the revocation endpoint asks; any
// other revocation by fosite (during a token request) is its reuse detection.
func withRevokeReason(ctx context.Context, reason string) context.Context {
	return context.WithValue(ctx, revokeReasonKey{}, reason)
}

// grantRevoked records oauth_grant.revoked once the grant of requestID has no active access or
// refresh token left (fosite revokes the two kinds one after the other), in the live company
// the grant belongs to (a test client's grants too: the user signed in there), in the
// transaction of the authorization server's request, so the event commits with the revocation.
func (s *Store) grantRevoked(ctx context.Context, requestID string) error {
	var (
		clientID, company uuid.UUID
		user              uuid.NullUUID
		granted           []byte
		live              bool
	)
	err := tenancy.QueryRow(ctx, sqlGrant, []any{requestID}, &clientID, &company, &user, &granted, &live)
	if errors.Is(err, sql.ErrNoRows) || err == nil && live {
		return nil // no such grant, or the other kind is revoked next
	}
	if err != nil {
		return fmt.Errorf("oauth grant %s: %w", requestID, err)
	}
	cl, err := s.GetClient(ctx, clientID.String())
	if err != nil {
		return nil // a disabled client's grants are dead already; nothing to announce
	}
	reason, _ := ctx.Value(revokeReasonKey{}).(string)
	if reason == "" {
		reason = ReasonTokenReuse
	}
	scopes := []string{}
	if err := json.Unmarshal(granted, &scopes); err != nil {
		return fmt.Errorf("oauth grant %s: %w", requestID, err)
	}
	v := GrantView{ID: requestID, ClientID: clientID, ClientName: cl.(*Client).c.Name, Scopes: scopes, Reason: reason,
		RevokedAt: time.Now().UTC()}
	if user.Valid {
		v.UserID = &user.UUID
	}
	ev := zerolog.Ctx(ctx).Info()
	if reason == ReasonTokenReuse {
		ev = zerolog.Ctx(ctx).Warn()
	}
	ev.Str("grant_id", requestID).Str("client_id", v.ClientID.String()).Str("reason", reason).Msg("oauth grant revoked")
	// Pin the server's transaction to the company for the event (the events table is tenant
	// data). It stays pinned: the outbox numbers the event at commit (a deferred trigger reads
	// the pin); the OAuth functions the server calls afterwards work the same pinned or not.
	if _, err := tenancy.Client(ctx).ExecContext(ctx, `SELECT set_config('app.company_id', $1, true)`, company.String()); err != nil {
		return fmt.Errorf("oauth grant %s: pin: %w", requestID, err)
	}
	return events.NewService().Record(tenancy.WithCompany(ctx, company), "oauth_grant.revoked", v)
}
