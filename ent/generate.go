// Package ent holds the generated data access code. Only schema/, rule/, schematype/ and this
// file are written by hand; everything else is produced by `go tool task generate`.
package ent

//go:generate go run entgo.io/ent/cmd/ent generate --feature privacy,entql,intercept,sql/versioned-migration,sql/upsert,sql/execquery,sql/lock --target . ./schema
