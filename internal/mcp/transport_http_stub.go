// STUB until the mcphttp branch lands — delete on merge.

package mcp

import (
	"context"
	"errors"
)

func newStreamableTransport(ctx context.Context, o httpOptions) (transport, error) {
	return nil, errors.New("the streamable HTTP transport is not built yet")
}

func newSSETransport(ctx context.Context, o httpOptions) (transport, error) {
	return nil, errors.New("the SSE transport is not built yet")
}
