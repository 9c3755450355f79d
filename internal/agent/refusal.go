package agent

// Refusal is what a front end that cannot ask anyone (print mode) returns
// from RequestPermission: the call is refused, and Reason, which says how the
// operator could allow it, becomes the tool's failure text for the model.
type Refusal struct{ Reason string }

func (r *Refusal) Error() string { return r.Reason }
