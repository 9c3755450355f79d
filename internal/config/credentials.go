package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gokeyring "github.com/zalando/go-keyring"
)

// Credentials are looked up in this order (ARCHITECTURE.md §3):
//
//  1. the provider's environment variables (Provider.KeyVars, in order);
//  2. the OS keyring (service "corvid", user = provider name), every call
//     bounded by KeyringTimeout; any error other than "not found" marks the
//     keyring unavailable for the rest of the process and we fall through;
//  3. auth.json under DataDir (mode 0600), written by `corvid auth login`
//     when the keyring cannot be used.
//
// Keys never appear in errors, logs or Status.

// KeyringService is the service name corvid's entries use in the OS keyring.
const KeyringService = "corvid"

// KeyringTimeout bounds every keyring call: a locked or absent Secret
// Service can block for a long time, and a missing key must not stall
// startup.
const KeyringTimeout = 3 * time.Second

// Keyring is the part of an OS keyring corvid uses. Get returns
// ErrKeyNotFound when there is no entry; any other error means the keyring
// is unavailable.
type Keyring interface {
	Get(service, user string) (string, error)
	Set(service, user, secret string) error
	Delete(service, user string) error
}

// ErrKeyNotFound is what a Keyring returns for a missing entry.
var ErrKeyNotFound = gokeyring.ErrNotFound

// errKeyringUnavailable replaces any keyring failure so that no backend
// detail (which could, in theory, echo a secret) leaks into messages.
var errKeyringUnavailable = errors.New("keyring unavailable")

// systemKeyring is the real OS keyring.
type systemKeyring struct{}

func (systemKeyring) Get(service, user string) (string, error) { return gokeyring.Get(service, user) }
func (systemKeyring) Set(service, user, secret string) error {
	return gokeyring.Set(service, user, secret)
}
func (systemKeyring) Delete(service, user string) error { return gokeyring.Delete(service, user) }

var (
	keyringMu      sync.Mutex
	activeKeyring  Keyring = systemKeyring{}
	keyringBroken  bool    // set after the first non-NotFound failure
	keyringTimeout = KeyringTimeout
	// keyringCache holds every Get answer of this process, keyed by
	// (service, user); SetKeyring and ForgetKeyringCache empty it, Login and
	// Logout update it. An in-flight Get is in the cache too, so concurrent
	// askers share one call.
	keyringCache = map[keyringKey]*keyringEntry{}
)

// keyringLister is a Keyring that can name, in one call, every user stored
// under a service (the Secret Service on Linux). A prefetch then asks Get
// only for the names that are stored.
type keyringLister interface {
	Users(service string) ([]string, error)
}

// KeyringParallel bounds how many keyring Gets one resolution runs at once.
const KeyringParallel = 8

type keyringKey struct{ service, user string }

// keyringEntry is one Get, done when done is closed: key, or err
// (ErrKeyNotFound, or a failure that marks the keyring broken when the
// answer is used).
type keyringEntry struct {
	done chan struct{}
	key  string
	err  error
}

// SetKeyring replaces the keyring (tests; a nil k disables the keyring),
// forgets an earlier "unavailable" verdict and empties the lookup cache. It
// returns a function restoring the previous keyring (with an empty cache).
func SetKeyring(k Keyring) (restore func()) {
	keyringMu.Lock()
	prev, prevBroken := activeKeyring, keyringBroken
	activeKeyring, keyringBroken = k, false
	keyringCache = map[keyringKey]*keyringEntry{}
	keyringMu.Unlock()
	return func() {
		keyringMu.Lock()
		activeKeyring, keyringBroken = prev, prevBroken
		keyringCache = map[keyringKey]*keyringEntry{}
		keyringMu.Unlock()
	}
}

// ForgetKeyringCache drops the remembered keyring answers, so that the next
// Credential asks the keyring again: for when another process (corvid acp
// --login, corvid auth login) may have stored a key.
func ForgetKeyringCache() {
	keyringMu.Lock()
	keyringCache = map[keyringKey]*keyringEntry{}
	keyringMu.Unlock()
}

// keyringDisabled reports whether the environment turned the keyring off
// (CORVID_KEYRING=off|0|false|no), e.g. for headless machines and tests.
func keyringDisabled(env Env) bool {
	switch strings.ToLower(strings.TrimSpace(env.Getenv("CORVID_KEYRING"))) {
	case "off", "0", "false", "no":
		return true
	}
	return false
}

// timeoutError is a keyring call that did not answer in time.
type timeoutError time.Duration

func (e timeoutError) Error() string { return fmt.Sprintf("timed out after %s", time.Duration(e)) }

// withTimeout runs op, giving up after timeout. A late answer is dropped.
func withTimeout[T any](timeout time.Duration, op func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1) // buffered: a late answer must not block the goroutine forever
	go func() {
		v, err := op()
		ch <- result{v, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-t.C:
		var zero T
		return zero, timeoutError(timeout)
	}
}

// settle turns a keyring answer from k into what callers see: the value,
// ErrKeyNotFound, or errKeyringUnavailable after marking k broken.
func settle[T any](k Keyring, v T, err error) (T, error) {
	if err == nil || errors.Is(err, ErrKeyNotFound) {
		return v, err
	}
	keyringMu.Lock()
	if activeKeyring == k {
		keyringBroken = true
	}
	keyringMu.Unlock()
	var zero T
	return zero, errKeyringUnavailable
}

// usableKeyringLocked is the active keyring, or nil when it is disabled, absent
// or broken. Callers hold keyringMu.
func usableKeyringLocked(env Env) Keyring {
	if keyringDisabled(env) || activeKeyring == nil || keyringBroken {
		return nil
	}
	return activeKeyring
}

// keyringCall runs op against the active keyring with the timeout. It returns
// errKeyringUnavailable when the keyring is disabled, was found broken, fails
// with anything but ErrKeyNotFound, or does not answer in time.
func keyringCall[T any](env Env, op func(Keyring) (T, error)) (T, error) {
	keyringMu.Lock()
	k, timeout := usableKeyringLocked(env), keyringTimeout
	keyringMu.Unlock()
	if k == nil {
		var zero T
		return zero, errKeyringUnavailable
	}
	v, err := withTimeout(timeout, func() (T, error) { return op(k) })
	return settle(k, v, err)
}

// entryLocked returns user's cache entry and whether the caller created it
// (and must fill it). Callers hold keyringMu.
func entryLocked(user string) (e *keyringEntry, created bool) {
	id := keyringKey{KeyringService, user}
	if e := keyringCache[id]; e != nil {
		return e, false
	}
	e = &keyringEntry{done: make(chan struct{})}
	keyringCache[id] = e
	return e, true
}

func (e *keyringEntry) fill(k Keyring, timeout time.Duration, user string) {
	e.key, e.err = withTimeout(timeout, func() (string, error) { return k.Get(KeyringService, user) })
	close(e.done)
}

// keyringGet is Get(KeyringService, user) through the cache: each user is
// asked at most once per process (until SetKeyring, ForgetKeyringCache, or
// corvid's own Login/Logout, which update the entry).
func keyringGet(env Env, user string) (string, error) {
	for {
		keyringMu.Lock()
		k, timeout := usableKeyringLocked(env), keyringTimeout
		if k == nil {
			keyringMu.Unlock()
			return "", errKeyringUnavailable
		}
		e, created := entryLocked(user)
		keyringMu.Unlock()
		if created {
			e.fill(k, timeout, user)
		}
		<-e.done
		if e.err != errNotAsked { // else a prefetch gave the name up: ask it
			return settle(k, e.key, e.err)
		}
	}
}

// errNotAsked marks a prefetch entry given up after another name failed;
// it is no longer in the cache.
var errNotAsked = errors.New("not asked")

// prefetchKeyring asks the keyring for every user not yet cached,
// KeyringParallel at a time, and waits for the answers, so that a walk
// over many names costs about one round trip instead of one per name. It
// only fills the cache: failures mark the keyring broken when (and if) a
// caller uses that answer, exactly as the sequential walk would. After a
// failure (a broken or hung keyring) it starts no further Gets, so a hung
// keyring costs one timeout, as in the sequential walk.
func prefetchKeyring(env Env, users []string) {
	keyringMu.Lock()
	k, timeout := usableKeyringLocked(env), keyringTimeout
	if k == nil {
		keyringMu.Unlock()
		return
	}
	var todo []*keyringEntry
	var names []string
	for _, u := range users {
		if e, created := entryLocked(u); created {
			todo, names = append(todo, e), append(names, u)
		}
	}
	keyringMu.Unlock()
	if len(todo) > 1 {
		todo, names = listKeyring(k, timeout, todo, names)
	}
	if len(todo) == 1 {
		todo[0].fill(k, timeout, names[0])
		return
	}
	sem := make(chan struct{}, KeyringParallel)
	var wg sync.WaitGroup
	var failed atomic.Bool
	for i, e := range todo {
		sem <- struct{}{}
		if failed.Load() {
			abandon(todo[i:], names[i:])
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.fill(k, timeout, names[i])
			if e.err != nil && !errors.Is(e.err, ErrKeyNotFound) {
				failed.Store(true)
			}
			<-sem
		}()
	}
	wg.Wait()
}

// abandon takes prefetch entries that were never asked out of the cache
// and releases their waiters, who ask for themselves.
func abandon(todo []*keyringEntry, names []string) {
	keyringMu.Lock()
	for i, e := range todo {
		id := keyringKey{KeyringService, names[i]}
		if keyringCache[id] == e {
			delete(keyringCache, id)
		}
		e.err = errNotAsked
		close(e.done)
	}
	keyringMu.Unlock()
}

// listKeyring answers "not found" for every name k can say is not stored,
// when k is a keyringLister, and returns the entries still to be asked. A
// listing that fails leaves them all to be asked one by one; one that
// times out answers them all with the timeout, as the first Get of a hung
// keyring would have.
func listKeyring(k Keyring, timeout time.Duration, todo []*keyringEntry, names []string) ([]*keyringEntry, []string) {
	l, ok := k.(keyringLister)
	if !ok {
		return todo, names
	}
	users, err := withTimeout(timeout, func() ([]string, error) { return l.Users(KeyringService) })
	if err != nil {
		var timedOut timeoutError
		if errors.As(err, &timedOut) {
			for _, e := range todo {
				e.err = err
				close(e.done)
			}
			return nil, nil
		}
		return todo, names
	}
	var restE []*keyringEntry
	var restN []string
	for i, e := range todo {
		if slices.Contains(users, names[i]) {
			restE, restN = append(restE, e), append(restN, names[i])
			continue
		}
		e.err = ErrKeyNotFound
		close(e.done)
	}
	return restE, restN
}

// rememberKeyring records what corvid itself just stored in (or removed
// from) the keyring, so the next Credential sees it without asking.
func rememberKeyring(user, key string, err error) {
	keyringMu.Lock()
	defer keyringMu.Unlock()
	if err != nil && !errors.Is(err, ErrKeyNotFound) {
		delete(keyringCache, keyringKey{KeyringService, user})
		return
	}
	e := &keyringEntry{done: make(chan struct{}), key: key, err: err}
	close(e.done)
	keyringCache[keyringKey{KeyringService, user}] = e
}

// keyringNames are the keyring users holding p's key, in lookup order.
func keyringNames(p Provider) []string {
	names := append([]string{p.Name}, p.Aliases...)
	if p.Shares != "" {
		names = append(names, p.Shares)
	}
	return names
}

// envCredential is p's key from its environment variables.
func envCredential(env Env, p Provider) (key, source string) {
	for _, v := range p.KeyVars {
		if k := strings.TrimSpace(env.Getenv(v)); k != "" {
			return k, "env:" + v
		}
	}
	return "", ""
}

// Credential returns the API key for provider and where it came from:
// "env:NAME", "keyring" or "file:PATH"; or "", "" if none is configured.
func Credential(env Env, p Provider) (key, source string) {
	if k, src := envCredential(env, p); src != "" {
		return k, src
	}
	names := keyringNames(p)
	for _, name := range names {
		if k, err := keyringGet(env, name); err == nil && strings.TrimSpace(k) != "" {
			rememberKeyringKey(strings.TrimSpace(k))
			return strings.TrimSpace(k), "keyring"
		}
	}
	path := AuthFile(env)
	if f, err := readAuthFile(path); err == nil {
		for _, name := range names {
			if e, ok := f[name]; ok && strings.TrimSpace(e.Key) != "" {
				return strings.TrimSpace(e.Key), "file:" + path
			}
		}
	}
	return "", ""
}

// prefetchCredentials asks the keyring, concurrently, for every name that
// Credential over providers (in order) may ask: the names of each provider
// without an environment key. With stopAtFirst (a walk that ends at the
// first provider with a key) it stops after the first provider whose key
// is in the environment or in auth.json, since the walk ends there.
func prefetchCredentials(env Env, providers []Provider, stopAtFirst bool) {
	var names []string
	var auth map[string]authEntry
	if stopAtFirst {
		auth, _ = readAuthFile(AuthFile(env))
	}
	seen := map[string]bool{}
collect:
	for _, p := range providers {
		if _, src := envCredential(env, p); src != "" {
			if stopAtFirst {
				break
			}
			continue
		}
		for _, n := range keyringNames(p) {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
		for _, n := range keyringNames(p) {
			if e, ok := auth[n]; ok && strings.TrimSpace(e.Key) != "" {
				break collect
			}
		}
	}
	prefetchKeyring(env, names)
}

// AuthFile is the credentials file used when the keyring is unavailable.
func AuthFile(env Env) string { return filepath.Join(DataDir(env), "auth.json") }

// authEntry is one provider's stored credential in auth.json.
type authEntry struct {
	Type string `json:"type"` // "api_key"
	Key  string `json:"key"`
}

func readAuthFile(path string) (map[string]authEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := map[string]authEntry{}
	if err := json.Unmarshal(b, &m); err != nil {
		// The parse error may quote the file; keep it out of the message.
		return nil, fmt.Errorf("read %s: not valid JSON", path)
	}
	return m, nil
}

// writeAuthFile replaces path atomically with mode 0600 (its directory 0700).
func writeAuthFile(path string, m map[string]authEntry) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".auth-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Login stores key for provider: in the OS keyring when it is usable, else
// in auth.json (0600). It returns where the key went: "keyring" or
// "file:PATH". Custom providers (config.toml) may be logged in by name too.
func Login(env Env, provider, key string) (where string, err error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return "", errors.New("empty key")
	}
	if provider == "" || strings.ContainsAny(provider, " \t\r\n/:") {
		return "", fmt.Errorf("invalid provider name %q", provider)
	}
	_, err = keyringCall(env, func(k Keyring) (struct{}, error) {
		return struct{}{}, k.Set(KeyringService, provider, key)
	})
	rememberKeyring(provider, key, err)
	if err == nil {
		// A stale key in the file would shadow nothing (keyring wins) but
		// would linger on disk; drop it.
		_ = removeFromAuthFile(AuthFile(env), provider)
		return "keyring", nil
	}
	path := AuthFile(env)
	m, err := readAuthFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		m, err = map[string]authEntry{}, nil
	}
	if err != nil {
		return "", err
	}
	m[provider] = authEntry{Type: "api_key", Key: key}
	if err := writeAuthFile(path, m); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return "file:" + path, nil
}

// Logout removes the stored key of provider from the keyring and auth.json.
// It returns where a key was removed from (none: nothing was stored).
// Environment variables are not touched; Status still reports them.
func Logout(env Env, provider string) (removed []string, err error) {
	_, kerr := keyringCall(env, func(k Keyring) (struct{}, error) {
		return struct{}{}, k.Delete(KeyringService, provider)
	})
	if kerr == nil {
		removed = append(removed, "keyring")
		kerr = ErrKeyNotFound // gone now
	}
	rememberKeyring(provider, "", kerr)
	path := AuthFile(env)
	switch err := removeFromAuthFile(path, provider); {
	case err == nil:
		removed = append(removed, "file:"+path)
	case errors.Is(err, errNotStored), errors.Is(err, fs.ErrNotExist):
	default:
		return removed, err
	}
	return removed, nil
}

var errNotStored = errors.New("not stored")

func removeFromAuthFile(path, provider string) error {
	m, err := readAuthFile(path)
	if err != nil {
		return err
	}
	if _, ok := m[provider]; !ok {
		return errNotStored
	}
	delete(m, provider)
	return writeAuthFile(path, m)
}

// ProviderStatus says whether a provider can be used. It never holds a key.
type ProviderStatus struct {
	Provider   Provider
	Configured bool   // a key is at hand, or none is needed
	Source     string // "env:NAME", "keyring", "file:PATH", "" (none), or "none needed"
	BaseURL    string
}

// Status reports every built-in provider, in Providers order.
func Status(env Env) []ProviderStatus {
	return StatusOf(env, Providers)
}

// StatusOf reports the given providers (e.g. File.AllProviders()).
func StatusOf(env Env, providers []Provider) []ProviderStatus {
	out := make([]ProviderStatus, 0, len(providers))
	prefetchCredentials(env, providers, false)
	for _, p := range providers {
		_, src := Credential(env, p)
		st := ProviderStatus{Provider: p, Source: src, BaseURL: BaseURL(env, p)}
		st.Configured = src != "" || !p.NeedsKey
		if src == "" && !p.NeedsKey {
			st.Source = "none needed"
		}
		out = append(out, st)
	}
	return out
}
