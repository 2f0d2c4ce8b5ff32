//go:build tools

// Package tools pins Cosmovisor (the Cosmos SDK's process manager for upgrades) for `make install`: go.mod and
// go.sum fix its version and every dependency's, so the build is the same on every machine.
package tools

import _ "cosmossdk.io/tools/cosmovisor/cmd/cosmovisor"
