package config

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// countingKeyring is a fake keyring that counts Gets per user and records
// how many were in flight at once. With a gate, every Get waits until gateN
// Gets have arrived (or gateWait passes: the test fails instead of hanging).
type countingKeyring struct {
	mu          sync.Mutex
	keys        map[string]string // user → secret
	fail        map[string]bool   // users whose Get fails like a broken backend
	gets        map[string]int
	sets, dels  int
	inFlight    int
	maxInFlight int

	gate     chan struct{}
	gateOnce sync.Once
	gateN    int
	gateWait time.Duration
	arrived  int
	gaveUp   bool
}

func newCountingKeyring() *countingKeyring {
	return &countingKeyring{keys: map[string]string{}, fail: map[string]bool{}, gets: map[string]int{}}
}

func (k *countingKeyring) openGate() { k.gateOnce.Do(func() { close(k.gate) }) }

func (k *countingKeyring) Get(service, user string) (string, error) {
	k.mu.Lock()
	if service != KeyringService {
		k.mu.Unlock()
		return "", fmt.Errorf("unexpected service %q", service)
	}
	k.gets[user]++
	k.inFlight++
	k.maxInFlight = max(k.maxInFlight, k.inFlight)
	k.arrived++
	if k.gate != nil && k.arrived >= k.gateN {
		k.openGate()
	}
	gate := k.gate
	k.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-time.After(k.gateWait):
			k.mu.Lock()
			k.gaveUp = true
			k.mu.Unlock()
			k.openGate() // let every other call through: fail, don't hang
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.inFlight--
	if k.fail[user] {
		return "", errors.New("dbus: org.freedesktop.secrets not provided")
	}
	v, ok := k.keys[user]
	if !ok {
		return "", ErrKeyNotFound
	}
	return v, nil
}

func (k *countingKeyring) Set(service, user, secret string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.sets++
	k.keys[user] = secret
	return nil
}

func (k *countingKeyring) Delete(service, user string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.dels++
	if _, ok := k.keys[user]; !ok {
		return ErrKeyNotFound
	}
	delete(k.keys, user)
	return nil
}

func (k *countingKeyring) getsOf(user string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.gets[user]
}

// listingKeyring adds a one-call listing of stored users (as the Secret
// Service keyring has); failList makes the listing fail.
type listingKeyring struct {
	*countingKeyring
	lists    int
	failList bool
}

func (k *listingKeyring) Users(service string) ([]string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.lists++
	if k.failList {
		return nil, errors.New("org.freedesktop.DBus.Error.UnknownMethod")
	}
	var out []string
	for u := range k.keys {
		out = append(out, u)
	}
	for u := range k.fail { // a Get that fails is for a name the listing shows
		out = append(out, u)
	}
	return out, nil
}

// allKeyringNames are the keyring users of every built-in provider.
func allKeyringNames() []string {
	var out []string
	for _, p := range Providers {
		for _, n := range keyringNames(p) {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// setKeyringTimeout changes the per-call timeout for one test.
func setKeyringTimeout(t *testing.T, d time.Duration) {
	keyringMu.Lock()
	keyringTimeout = d
	keyringMu.Unlock()
	t.Cleanup(func() { keyringMu.Lock(); keyringTimeout = KeyringTimeout; keyringMu.Unlock() })
}

func TestKeyringAskedOncePerNameAcrossStartupCallers(t *testing.T) {
	kr := newCountingKeyring()
	var last Provider // the walk's last provider
	for _, p := range Providers {
		if p.NeedsKey && p.DefaultModel != "" {
			last = p
		}
	}
	kr.keys[last.Name] = "k-last"
	defer SetKeyring(kr)()
	env := tempEnv(t)

	for range 2 {
		p, m, err := ResolveModel(env, nil, "")
		if err != nil || p != last.Name || m != last.DefaultModel {
			t.Fatalf("ResolveModel = %q, %q, %v; want %s", p, m, err, last.Name)
		}
		StatusOf(env, Providers)
		for _, p := range Providers {
			Credential(env, p)
		}
	}
	for _, n := range allKeyringNames() {
		if got := kr.getsOf(n); got != 1 {
			t.Errorf("keyring asked for %q %d times; want exactly once per process", n, got)
		}
	}
	for n, c := range kr.gets {
		if !slices.Contains(allKeyringNames(), n) {
			t.Errorf("keyring asked for %q (%d times), which no provider uses", n, c)
		}
	}
}

func TestResolveModelAsksKeyringConcurrently(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Providers {
		if p.NeedsKey && p.DefaultModel != "" {
			for _, n := range keyringNames(p) {
				seen[n] = true
			}
		}
	}
	names := len(seen)
	kr := newCountingKeyring()
	kr.gate = make(chan struct{})
	kr.gateN = min(KeyringParallel, names) // a sequential walk never gets past the first
	kr.gateWait = 5 * time.Second
	defer SetKeyring(kr)()
	setKeyringTimeout(t, time.Minute) // the gate, not the timeout, decides
	env := tempEnv(t)

	if _, _, err := ResolveModel(env, nil, ""); err != ErrNoModel {
		t.Fatalf("ResolveModel err = %v; want ErrNoModel", err)
	}
	if kr.gaveUp || kr.maxInFlight < kr.gateN {
		t.Fatalf("at most %d keyring lookups were in flight at once (gave up waiting: %v); want %d overlapping", kr.maxInFlight, kr.gaveUp, kr.gateN)
	}
	if kr.maxInFlight > KeyringParallel {
		t.Fatalf("%d lookups in flight; the bound is %d", kr.maxInFlight, KeyringParallel)
	}
	if got := len(kr.gets); got != names {
		t.Fatalf("asked for %d names; want all %d of the walk", got, names)
	}
}

func TestStatusAsksKeyringConcurrently(t *testing.T) {
	kr := newCountingKeyring()
	kr.gate = make(chan struct{})
	kr.gateN = 2
	kr.gateWait = 5 * time.Second
	defer SetKeyring(kr)()
	setKeyringTimeout(t, time.Minute)
	env := tempEnv(t)
	StatusOf(env, Providers[:2])
	if kr.gaveUp || kr.maxInFlight < 2 {
		t.Fatalf("max in flight %d (gave up: %v); want the two lookups to overlap", kr.maxInFlight, kr.gaveUp)
	}
}

func TestResolveModelSkipsKeyringBeyondAnEnvKey(t *testing.T) {
	kr := newCountingKeyring()
	defer SetKeyring(kr)()
	env := tempEnv(t)
	env["OPENAI_API_KEY"] = "sk-env"
	if p, _, err := ResolveModel(env, nil, ""); err != nil || p != "openai" {
		t.Fatalf("ResolveModel = %q, %v", p, err)
	}
	if len(kr.gets) != 1 || kr.gets["anthropic"] != 1 {
		t.Fatalf("keyring asked for %v; want only anthropic (openai's env key ends the walk)", kr.gets)
	}
}

func TestKeyringCacheSeesOwnLoginAndLogout(t *testing.T) {
	kr := newCountingKeyring()
	defer SetKeyring(kr)()
	env := tempEnv(t)
	p := openai(t)

	if k, src := Credential(env, p); k != "" || src != "" {
		t.Fatalf("Credential = %q, %q before login", k, src)
	}
	if where, err := Login(env, "openai", " sk-new "); err != nil || where != "keyring" {
		t.Fatalf("Login = %q, %v", where, err)
	}
	if k, src := Credential(env, p); k != "sk-new" || src != "keyring" {
		t.Fatalf("Credential after Login = %q, %q", k, src)
	}
	if removed, err := Logout(env, "openai"); err != nil || len(removed) != 1 {
		t.Fatalf("Logout = %v, %v", removed, err)
	}
	if k, src := Credential(env, p); k != "" || src != "" {
		t.Fatalf("Credential after Logout = %q, %q", k, src)
	}
	if got := kr.getsOf("openai"); got != 1 {
		t.Fatalf("keyring Get for openai %d times; Login/Logout must update the cache", got)
	}

	// Another process stores a key: invisible until the cache is forgotten
	// (what ACP authenticate does), then asked again.
	kr.mu.Lock()
	kr.keys["openai"] = "sk-other-process"
	kr.mu.Unlock()
	if k, _ := Credential(env, p); k != "" {
		t.Fatalf("Credential = %q from the cache; want the remembered not-found", k)
	}
	ForgetKeyringCache()
	if k, src := Credential(env, p); k != "sk-other-process" || src != "keyring" {
		t.Fatalf("Credential after ForgetKeyringCache = %q, %q", k, src)
	}
	if got := kr.getsOf("openai"); got != 2 {
		t.Fatalf("keyring Get for openai %d times; want 2", got)
	}

	// SetKeyring starts afresh.
	kr2 := newCountingKeyring()
	defer SetKeyring(kr2)()
	if k, _ := Credential(env, p); k != "" || kr2.getsOf("openai") != 1 {
		t.Fatalf("Credential = %q with a new keyring asked %d times", k, kr2.getsOf("openai"))
	}
}

func TestListingKeyringAsksOnlyStoredNames(t *testing.T) {
	kr := newCountingKeyring()
	kr.keys["groq"] = "gsk"
	lk := &listingKeyring{countingKeyring: kr}
	defer SetKeyring(lk)()
	env := tempEnv(t)
	if p, _, err := ResolveModel(env, nil, ""); err != nil || p != "groq" {
		t.Fatalf("ResolveModel = %q, %v", p, err)
	}
	StatusOf(env, Providers)
	if lk.lists != 2 || len(kr.gets) != 1 || kr.gets["groq"] != 1 {
		t.Fatalf("listed %d times, asked %v; want two listings and one Get, for groq", lk.lists, kr.gets)
	}

	// A listing that fails falls back to asking every name.
	kr2 := newCountingKeyring()
	lk2 := &listingKeyring{countingKeyring: kr2, failList: true}
	defer SetKeyring(lk2)()
	StatusOf(env, Providers)
	if len(kr2.gets) != len(allKeyringNames()) {
		t.Fatalf("after a failed listing asked %d names; want all %d", len(kr2.gets), len(allKeyringNames()))
	}
}

// A hung keyring costs the walk one timeout, not one per wave of names,
// and names never asked are still asked by a later lookup of their own.
func TestHungKeyringStopsThePrefetch(t *testing.T) {
	kr := newCountingKeyring()
	kr.gate = make(chan struct{}) // never opened by arrivals: every Get hangs
	kr.gateN = 1 << 30
	kr.gateWait = time.Minute
	defer kr.openGate()
	defer SetKeyring(kr)()
	setKeyringTimeout(t, 20*time.Millisecond)
	env := tempEnv(t)
	if _, _, err := ResolveModel(env, nil, ""); err != ErrNoModel {
		t.Fatalf("ResolveModel err = %v", err)
	}
	kr.mu.Lock()
	asked := len(kr.gets)
	kr.mu.Unlock()
	if asked > KeyringParallel {
		t.Fatalf("a hung keyring was asked for %d names; want the prefetch to stop after the first wave (%d)", asked, KeyringParallel)
	}
}

func TestFailedKeyringLeavesUnaskedNamesToTheirOwnLookup(t *testing.T) {
	kr := newCountingKeyring()
	kr.keys["cerebras"] = "csk"
	kr.fail["openai"] = true
	defer SetKeyring(kr)()
	env := tempEnv(t)
	// openai fails first; whether cerebras, last, was asked before the
	// prefetch saw that or was given up, its own lookup finds its key:
	// the failure has not been used yet, as in the sequential lookup.
	names := slices.DeleteFunc(allKeyringNames(), func(n string) bool { return n == "openai" || n == "cerebras" })
	prefetchKeyring(env, append(append([]string{"openai"}, names...), "cerebras"))
	if k, src := Credential(env, Provider{Name: "cerebras"}); k != "csk" || src != "keyring" {
		t.Fatalf("cerebras = %q, %q; the sequential lookup finds it", k, src)
	}
	if k, _ := Credential(env, Provider{Name: "openai"}); k != "" {
		t.Fatalf("openai = %q", k)
	}
	for n, c := range kr.gets {
		if c > 1 {
			t.Fatalf("%q asked %d times", n, c)
		}
	}
}

// ---- oracle: the sequential lookup corvid used before the cache ----

type oracle struct {
	env    MapEnv
	kr     *countingKeyring // read directly, never through the cache
	broken bool
}

func (o *oracle) get(user string) (string, error) {
	if keyringDisabled(o.env) || o.broken {
		return "", errKeyringUnavailable
	}
	if o.kr.fail[user] {
		o.broken = true
		return "", errKeyringUnavailable
	}
	v, ok := o.kr.keys[user]
	if !ok {
		return "", ErrKeyNotFound
	}
	return v, nil
}

func (o *oracle) credential(p Provider) (string, string) {
	for _, v := range p.KeyVars {
		if k := strings.TrimSpace(o.env.Getenv(v)); k != "" {
			return k, "env:" + v
		}
	}
	names := append([]string{p.Name}, p.Aliases...)
	if p.Shares != "" {
		names = append(names, p.Shares)
	}
	for _, name := range names {
		if k, err := o.get(name); err == nil && strings.TrimSpace(k) != "" {
			return strings.TrimSpace(k), "keyring"
		}
	}
	path := AuthFile(o.env)
	if f, err := readAuthFile(path); err == nil {
		for _, name := range names {
			if e, ok := f[name]; ok && strings.TrimSpace(e.Key) != "" {
				return strings.TrimSpace(e.Key), "file:" + path
			}
		}
	}
	return "", ""
}

func (o *oracle) resolve() (string, string, error) {
	for _, p := range Providers {
		if !p.NeedsKey || p.DefaultModel == "" {
			continue
		}
		if _, src := o.credential(p); src != "" {
			return p.Name, p.DefaultModel, nil
		}
	}
	return "", "", ErrNoModel
}

// randomCase places env, keyring and auth.json keys (some blank, some
// keyring names failing) across a few providers.
func randomCase(t *testing.T, r *rand.Rand) (MapEnv, *countingKeyring) {
	env := tempEnv(t)
	kr := newCountingKeyring()
	auth := map[string]authEntry{}
	pick := func() Provider { return Providers[r.IntN(len(Providers))] }
	key := func(tag string) string {
		switch r.IntN(8) {
		case 0:
			return "  " // blank: must be skipped
		case 1:
			return " " + tag + " " // padded: trimmed
		}
		return tag
	}
	for i := range r.IntN(4) {
		p := pick()
		env[p.KeyVars[r.IntN(len(p.KeyVars))]] = key(fmt.Sprintf("env-%s-%d", p.Name, i))
	}
	for i := range r.IntN(5) {
		p := pick()
		names := keyringNames(p)
		kr.keys[names[r.IntN(len(names))]] = key(fmt.Sprintf("kr-%s-%d", p.Name, i))
	}
	for i := range r.IntN(4) {
		p := pick()
		names := keyringNames(p)
		auth[names[r.IntN(len(names))]] = authEntry{Type: "api_key", Key: key(fmt.Sprintf("file-%s-%d", p.Name, i))}
	}
	if r.IntN(4) == 0 {
		names := keyringNames(pick())
		kr.fail[names[r.IntN(len(names))]] = true
	}
	if r.IntN(10) == 0 {
		env["CORVID_KEYRING"] = "off"
	}
	if len(auth) > 0 || r.IntN(2) == 0 {
		if err := writeAuthFile(AuthFile(env), auth); err != nil {
			t.Fatal(err)
		}
	}
	return env, kr
}

func TestCredentialPrecedenceMatchesSequentialLookup(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 2026))
	for i := range 250 {
		env, kr := randomCase(t, r)
		var active Keyring = kr
		switch i % 3 {
		case 1:
			active = &listingKeyring{countingKeyring: kr}
		case 2:
			active = &listingKeyring{countingKeyring: kr, failList: true}
		}
		restore := SetKeyring(active)
		o := &oracle{env: env, kr: kr}
		describe := func() string {
			var auth string
			if b, err := os.ReadFile(AuthFile(env)); err == nil {
				auth = strings.Join(strings.Fields(string(b)), "")
			}
			return fmt.Sprintf("case %d (%T): env %v keyring %v failing %v auth %s", i, active, env, kr.keys, kr.fail, auth)
		}

		// The start-up order: resolve, then status, then single lookups;
		// a broken keyring found on the way stays broken in both.
		gp, gm, gerr := ResolveModel(env, nil, "")
		wp, wm, werr := o.resolve()
		if gp != wp || gm != wm || gerr != werr {
			t.Fatalf("%s\nResolveModel = %q, %q, %v; sequential = %q, %q, %v", describe(), gp, gm, gerr, wp, wm, werr)
		}
		// Then a few single lookups in any order (providers.Config for
		// the chosen model, a model switch), before the status walk.
		for range r.IntN(3) {
			p := Providers[r.IntN(len(Providers))]
			gk, gs := Credential(env, p)
			wk, ws := o.credential(p)
			if gk != wk || gs != ws {
				t.Fatalf("%s\nCredential(%s) after resolve = %q, %q; sequential = %q, %q", describe(), p.Name, gk, gs, wk, ws)
			}
		}
		for j, st := range StatusOf(env, Providers) {
			_, wsrc := o.credential(Providers[j])
			if !Providers[j].NeedsKey && wsrc == "" {
				wsrc = "none needed"
			}
			if st.Source != wsrc {
				t.Fatalf("%s\nStatusOf %s source = %q; sequential = %q", describe(), Providers[j].Name, st.Source, wsrc)
			}
		}
		for _, p := range Providers {
			gk, gs := Credential(env, p)
			wk, ws := o.credential(p)
			if gk != wk || gs != ws {
				t.Fatalf("%s\nCredential(%s) = %q, %q; sequential = %q, %q", describe(), p.Name, gk, gs, wk, ws)
			}
		}
		for n, c := range kr.gets {
			if c > 1 {
				t.Fatalf("%s\nkeyring asked for %q %d times", describe(), n, c)
			}
		}
		restore()
	}
}

// slowKeyring answers every Get after delay, like a Secret Service round
// trip or an exec of /usr/bin/security, with nothing stored.
type slowKeyring struct{ delay time.Duration }

func (k slowKeyring) Get(string, string) (string, error) {
	time.Sleep(k.delay)
	return "", ErrKeyNotFound
}
func (slowKeyring) Set(string, string, string) error { return nil }
func (slowKeyring) Delete(string, string) error      { return nil }

// BenchmarkResolveModelSlowKeyring is start-up's worst case: no key
// anywhere, so the walk asks the keyring for every provider's names, each
// answer taking 1 ms. Sequentially that is one millisecond per name
// (about 22 ms); asked KeyringParallel at a time, about three.
func BenchmarkResolveModelSlowKeyring(b *testing.B) {
	env := MapEnv{"HOME": b.TempDir()}
	for b.Loop() {
		restore := SetKeyring(slowKeyring{delay: time.Millisecond}) // empty cache: a fresh process
		if _, _, err := ResolveModel(env, nil, ""); err != ErrNoModel {
			b.Fatal(err)
		}
		restore()
	}
}
