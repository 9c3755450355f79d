package acp

import (
	"encoding/json"
	"errors"
	"fmt"
)

// JSON-RPC and ACP error codes.
const (
	CodeParseError       = -32700
	CodeInvalidRequest   = -32600
	CodeMethodNotFound   = -32601
	CodeInvalidParams    = -32602
	CodeInternalError    = -32603
	CodeRequestCancelled = -32800
	CodeAuthRequired     = -32000
	CodeResourceNotFound = -32002
)

// Error is a JSON-RPC error object. It is also a Go error, so handlers return
// it (possibly wrapped) and Conn maps it with errors.As; any other error
// becomes -32603 without leaking its text.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string {
	if e.Data != nil {
		b, _ := json.Marshal(e.Data)
		return fmt.Sprintf("%s (%d): %s", e.Message, e.Code, b)
	}
	return fmt.Sprintf("%s (%d)", e.Message, e.Code)
}

// Details is the conventional data payload: the one-sentence message says
// what went wrong, details says exactly where.
type Details struct {
	Details string `json:"details"`
}

// NewError returns an error with code and message, and details when non-empty.
func NewError(code int, message, details string) *Error {
	e := &Error{Code: code, Message: message}
	if details != "" {
		e.Data = Details{Details: details}
	}
	return e
}

// InvalidParams is -32602 with a one-sentence message and the specifics.
func InvalidParams(message string, details string) *Error {
	return NewError(CodeInvalidParams, message, details)
}

// InvalidParamsf formats the details.
func InvalidParamsf(message, format string, args ...any) *Error {
	return NewError(CodeInvalidParams, message, fmt.Sprintf(format, args...))
}

// MethodNotFound is -32601 for method.
func MethodNotFound(method string) *Error {
	return NewError(CodeMethodNotFound, "Method not found", "unknown method "+method)
}

// AuthRequired is -32000 with an actionable message.
func AuthRequired(message string) *Error {
	return &Error{Code: CodeAuthRequired, Message: message}
}

// ResourceNotFound is -32002.
func ResourceNotFound(message, details string) *Error {
	return NewError(CodeResourceNotFound, message, details)
}

// AsError extracts an *Error from err's chain.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
