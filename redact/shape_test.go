package redact

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// gen returns n pseudo-random characters of charset, the same on every run
// for the same seed, so a sample never depends on luck.
func gen(seed uint64, charset string, n int) string {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	b := make([]byte, n)
	for i := range b {
		b[i] = charset[r.IntN(len(charset))]
	}
	return string(b)
}

const (
	alnum   = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	upper32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	lowerHx = "0123456789abcdef"
	letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	urlsafe = alnum + "_-"
	b64     = alnum + "+/"
	lowAn   = "0123456789abcdefghijklmnopqrstuvwxyz"
	digits  = "0123456789"
	bech32  = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
)

// shapeSample is one token of a rule: the text written and the secret that
// must be found in it (the whole token unless the rule has a group).
type shapeSample struct {
	id, token, secret string
}

func shapeSamples() []shapeSample {
	g := func(seed uint64, cs string, n int) string { return gen(seed, cs, n) }
	s := func(id, tok string) shapeSample { return shapeSample{id: id, token: tok, secret: tok} }
	return []shapeSample{
		s("anthropic-admin-api-key", "sk-ant-admin01-"+g(1, urlsafe, 93)+"AA"),
		s("anthropic-api-key", "sk-ant-api03-"+g(2, urlsafe, 93)+"AA"),
		s("anthropic-api-key", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz"),
		s("openai-api-key", "sk-proj-"+g(3, urlsafe, 74)+"T3BlbkFJ"+g(4, urlsafe, 74)),
		s("openai-api-key", "sk-proj-"+g(5, alnum, 40)),
		s("openai-api-key", "sk-svcacct-"+g(6, urlsafe, 58)),
		s("openai-api-key", "sk-"+g(7, alnum, 20)+"T3BlbkFJ"+g(8, alnum, 20)),
		s("huggingface-access-token", "hf_"+g(9, letters, 34)),
		s("huggingface-organization-api-token", "api_org_"+g(10, letters, 34)),
		s("perplexity-api-key", "pplx-"+g(11, alnum, 48)),
		s("github-pat", "ghp_"+g(12, alnum, 36)),
		s("github-pat", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
		s("github-oauth", "gho_"+g(13, alnum, 36)),
		s("github-app-token", "ghs_"+g(14, alnum, 36)),
		s("github-app-token", "ghu_"+g(15, alnum, 36)),
		s("github-refresh-token", "ghr_"+g(16, alnum, 36)),
		s("github-fine-grained-pat", "github_pat_"+g(17, alnum, 22)+"_"+g(18, alnum, 59)),
		s("gitlab-pat", "glpat-"+g(19, urlsafe, 20)),
		s("gitlab-pat", "glpat-"+g(20, urlsafe, 27)+".01"+g(21, lowAn, 7)),
		s("gitlab-ptt", "glptt-"+g(22, lowerHx, 40)),
		s("gitlab-deploy-token", "gldt-"+g(23, urlsafe, 20)),
		s("gitlab-runner-authentication-token", "glrt-"+g(24, urlsafe, 20)),
		s("gitlab-rrt", "GR1348941"+g(25, urlsafe, 20)),
		s("gitlab-cicd-job-token", "glcbt-"+g(26, alnum, 3)+"_"+g(27, urlsafe, 20)),
		s("gitlab-feed-token", "glft-"+g(28, urlsafe, 20)),
		s("gitlab-incoming-mail-token", "glimt-"+g(29, urlsafe, 25)),
		s("gitlab-kubernetes-agent-token", "glagent-"+g(30, urlsafe, 50)),
		s("gitlab-oauth-app-secret", "gloas-"+g(31, urlsafe, 64)),
		s("gitlab-scim-token", "glsoat-"+g(32, urlsafe, 20)),
		s("gitlab-feature-flag-client-token", "glffct-"+g(33, urlsafe, 20)),
		{id: "gitlab-session-cookie", token: "_gitlab_session=" + g(34, lowAn, 32), secret: g(34, lowAn, 32)},
		s("npm-access-token", "npm_"+g(35, alnum, 36)),
		s("pypi-upload-token", "pypi-AgEIcHlwaS5vcmc"+g(36, urlsafe, 70)),
		s("rubygems-api-token", "rubygems_"+g(37, lowerHx, 48)),
		s("clojars-api-token", "CLOJARS_"+g(38, alnum, 60)),
		s("artifactory-api-key", "AKCp"+g(39, alnum, 69)),
		s("readme-api-token", "rdme_"+g(40, lowAn, 70)),
		s("postman-api-token", "PMAK-"+g(41, lowerHx, 24)+"-"+g(42, lowerHx, 34)),
		s("prefect-api-token", "pnu_"+g(43, alnum, 36)),
		s("pulumi-api-token", "pul-"+g(44, lowerHx, 40)),
		s("linear-api-key", "lin_api_"+g(45, alnum, 40)),
		s("notion-api-token", "ntn_"+g(46, digits, 11)+g(47, alnum, 35)),
		s("harness-api-key", "pat."+g(48, urlsafe, 22)+"."+g(49, alnum, 24)+"."+g(50, alnum, 20)),
		s("sentry-user-token", "sntryu_"+g(51, lowerHx, 64)),
		s("sentry-org-token", "sntrys_eyJpYXQiO"+g(52, b64, 80)),
		s("aws-access-token", "AKIA"+g(53, upper32, 16)),
		s("aws-access-token", "ASIA"+g(54, upper32, 16)),
		s("aws-access-token", "AKIAIOSFODNN7EXAMPLE"),
		s("aws-amazon-bedrock-api-key-long-lived", "ABSK"+g(55, b64, 120)),
		s("gcp-api-key", "AIza"+g(56, urlsafe, 35)),
		s("alibaba-access-key-id", "LTAI"+g(57, alnum, 20)),
		s("digitalocean-pat", "dop_v1_"+g(58, lowerHx, 64)),
		s("digitalocean-access-token", "doo_v1_"+g(59, lowerHx, 64)),
		s("digitalocean-refresh-token", "dor_v1_"+g(60, lowerHx, 64)),
		s("doppler-api-token", "dp.pt."+g(61, alnum, 43)),
		s("dynatrace-api-token", "dt0c01."+g(62, alnum, 24)+"."+g(63, alnum, 64)),
		s("databricks-api-token", "dapi"+g(64, lowerHx, 32)),
		s("heroku-api-key-v2", "HRKU-AA"+g(65, urlsafe, 58)),
		s("flyio-access-token", "fo1_"+g(66, urlsafe, 43)),
		s("flyio-access-token", "fm2_"+g(67, b64, 120)),
		s("vault-service-token", "hvs."+g(68, urlsafe, 95)),
		s("vault-batch-token", "hvb."+g(69, urlsafe, 140)),
		s("planetscale-api-token", "pscale_tkn_"+g(70, alnum, 43)),
		s("planetscale-api-token", "pscale_tkn_"+g(70, alnum, 20)+"."+g(70, alnum, 20)),
		s("planetscale-oauth-token", "pscale_oauth_"+g(71, alnum, 43)),
		s("planetscale-password", "pscale_pw_"+g(72, alnum, 43)),
		s("scalingo-api-token", "tk-us-"+g(73, urlsafe, 48)),
		s("openshift-user-token", "sha256~"+g(74, urlsafe, 43)),
		s("infracost-api-token", "ico-"+g(75, alnum, 32)),
		s("grafana-cloud-api-token", "glc_"+g(76, b64, 60)),
		s("grafana-service-account-token", "glsa_"+g(77, alnum, 32)+"_"+g(78, lowerHx, 8)),
		s("grafana-api-key", "eyJrIjoi"+g(79, alnum, 80)),
		s("1password-service-account-token", "ops_eyJ"+g(80, b64, 300)),
		s("slack-bot-token", "xoxb-"+g(81, digits, 12)+"-"+g(82, digits, 13)+"-"+g(83, alnum, 24)),
		s("slack-user-token", "xoxp-"+g(84, digits, 12)+"-"+g(85, digits, 12)+"-"+g(86, digits, 12)+"-"+g(87, alnum, 32)),
		s("slack-app-token", "xapp-1-"+g(88, alnum, 11)+"-"+g(89, digits, 13)+"-"+g(90, lowAn, 64)),
		s("slack-legacy-token", "xoxs-"+g(91, digits, 10)+"-"+g(92, digits, 10)+"-"+g(93, digits, 10)+"-"+g(94, lowerHx, 64)),
		s("slack-legacy-workspace-token", "xoxa-2-"+g(95, alnum, 40)),
		s("slack-webhook-url", "hooks.slack.com/services/"+g(96, alnum, 44)),
		s("sendgrid-api-token", "SG."+g(97, urlsafe, 22)+"."+g(98, urlsafe, 43)),
		s("sendinblue-api-token", "xkeysib-"+g(99, lowerHx, 64)+"-"+g(100, alnum, 16)),
		s("twilio-api-key", "SK"+g(101, lowerHx, 32)),
		s("stripe-access-token", "sk_live_"+g(102, alnum, 24)),
		s("stripe-access-token", "rk_test_"+g(103, alnum, 24)),
		s("shopify-access-token", "shpat_"+g(104, lowerHx, 32)),
		s("shopify-custom-access-token", "shpca_"+g(105, lowerHx, 32)),
		s("shopify-private-app-access-token", "shppa_"+g(106, lowerHx, 32)),
		s("shopify-shared-secret", "shpss_"+g(107, lowerHx, 32)),
		s("square-access-token", "sq0atp-"+g(108, urlsafe, 22)),
		s("square-access-token", "EAAA"+g(109, urlsafe, 60)),
		s("facebook-page-access-token", "EAAC"+g(110, alnum, 120)),
		s("shippo-api-token", "shippo_live_"+g(111, lowerHx, 40)),
		s("duffel-api-token", "duffel_test_"+g(112, urlsafe, 43)),
		s("easypost-api-token", "EZAK"+g(113, alnum, 54)),
		s("adobe-client-secret", "p8e-"+g(114, alnum, 32)),
		s("frameio-api-token", "fio-u-"+g(115, urlsafe, 64)),
		s("age-secret-key", "AGE-SECRET-KEY-1"+g(116, bech32, 58)),
		s("private-key", "-----BEGIN RSA PRIVATE KEY-----\n"+pemBody(117, 12)+"-----END RSA PRIVATE KEY-----"),
		s("private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\\n"+g(118, b64, 300)+"\\n-----END OPENSSH PRIVATE KEY-----"),
		s("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."+g(119, urlsafe, 43)),
	}
}

// pemBody returns lines of base64 as in a PEM block.
func pemBody(seed uint64, lines int) string {
	var b strings.Builder
	for i := range lines {
		b.WriteString(gen(seed+uint64(i), b64, 64))
		b.WriteByte('\n')
	}
	return b.String()
}

func shapeName(id string) string { return strings.ToUpper(strings.ReplaceAll(id, "-", "_")) }

func shapeSecrets(v any) []Secret {
	var out []Secret
	for _, s := range Discover(v) {
		if strings.HasPrefix(s.Source, "shape:") {
			out = append(out, s)
		}
	}
	return out
}

func TestShapesTruePositives(t *testing.T) {
	covered := map[string]bool{}
	for _, sm := range shapeSamples() {
		covered[sm.id] = true
		want := Secret{Value: sm.secret, Name: shapeName(sm.id), Source: "shape:" + sm.id}
		// The same token alone, in prose, quoted, assigned, in JSON text, at
		// the end of a sentence and between parentheses.
		for _, text := range []string{
			sm.token,
			"the key " + sm.token + " was rotated",
			`"` + sm.token + `"`,
			"x=" + sm.token,
			`{"note":"` + sm.token + `"}`,
			"it is " + sm.token + ".",
			"(" + sm.token + ")",
			"a\n" + sm.token + "\nb",
		} {
			got := shapeSecrets(text)
			if len(got) != 1 || got[0] != want {
				t.Errorf("%s in %.40q: got %v, want [%v]", sm.id, text, got, want)
			}
		}
	}
	for _, r := range shapeRules {
		if !covered[r.id] {
			t.Errorf("rule %s has no sample", r.id)
		}
	}
}

func TestShapesBoundaries(t *testing.T) {
	pat := "ghp_" + gen(12, alnum, 36)
	aws := "AKIA" + gen(53, upper32, 16)
	tests := []struct {
		name string
		in   string
		want []string // secret values, in order
	}{
		{"glued to a word before", "x" + pat, nil},
		{"glued to a digit before", "7" + pat, nil},
		{"after an underscore", "TOKEN_" + pat, []string{pat}},
		{"after a dash", "k-" + pat, []string{pat}},
		{"a letter glued to a fixed-length token", "SK" + gen(101, lowerHx, 32) + "g", nil},
		{"an underscore after", pat + "_x", nil},
		{"a dash after", pat + "-x", nil},
		{"a dot after", pat + ".x", []string{pat}},
		{"aws one character too long", aws + "A", nil},
		{"aws with a character outside the alphabet", "AKIA" + gen(53, upper32, 15) + "1", nil},
		{"aws one character too short", aws[:19], nil},
		{"too short", "ghp_" + gen(12, alnum, 29), nil},
		{"shortest accepted", "ghp_" + gen(12, alnum, 30), []string{"ghp_" + gen(12, alnum, 30)}},
		{"longest accepted", "ghp_" + gen(12, alnum, 251), []string{"ghp_" + gen(12, alnum, 251)}},
		{"one past the longest", "ghp_" + gen(12, alnum, 252), nil},
		{"placeholder", "ghp_" + strings.Repeat("x", 36), nil},
		{"low entropy", "AKIA" + strings.Repeat("AB", 8), nil},
		{"two tokens", pat + " " + aws, []string{pat, aws}},
		{"two tokens with a comma", pat + "," + aws, []string{pat, aws}},
		{"back to back across a dot", pat + "." + pat, []string{pat}},
		{"a token inside a token is not another", "glpat-xx-" + pat, []string{"glpat-xx-" + pat}},
		{"first rule wins", "sk-ant-admin01-" + gen(1, alnum, 30), []string{"sk-ant-admin01-" + gen(1, alnum, 30)}},
		{"a failed first rule leaves the next", "sk-ant-admin-" + gen(1, alnum, 30), []string{"sk-ant-admin-" + gen(1, alnum, 30)}},
		{"case matters", "GHP_" + gen(12, alnum, 36), nil},
		{"only the prefix", "ghp_", nil},
		{"two-byte text", "gh", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, s := range shapeSecrets(tt.in) {
				got = append(got, s.Value)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	// The names say which rule matched.
	if got := shapeSecrets("sk-ant-admin01-" + gen(1, alnum, 30)); len(got) != 1 || got[0].Name != "ANTHROPIC_ADMIN_API_KEY" {
		t.Errorf("admin key: %v", got)
	}
	if got := shapeSecrets("sk-ant-admin-" + gen(1, alnum, 30)); len(got) != 1 || got[0].Name != "ANTHROPIC_API_KEY" {
		t.Errorf("plain key: %v", got)
	}
}

func TestShapesPrivateKeyWindow(t *testing.T) {
	// A block longer than the rule's window is not taken: its end is never
	// seen, and a shorter "match" would leave part of the key visible.
	long := "-----BEGIN PRIVATE KEY-----\n" + pemBody(5, (64<<10)/65+1) + "-----END PRIVATE KEY-----"
	if got := shapeSecrets(long); len(got) != 0 {
		t.Errorf("block beyond the window found: %d bytes", len(got[0].Value))
	}
	// A certificate is not a private key.
	cert := "-----BEGIN CERTIFICATE-----\n" + pemBody(6, 10) + "-----END CERTIFICATE-----"
	if got := shapeSecrets(cert); len(got) != 0 {
		t.Errorf("certificate found: %v", got)
	}
}

func TestShapesInDiscoverAndViews(t *testing.T) {
	pat := "github_pat_" + gen(17, alnum, 22) + "_" + gen(18, alnum, 59)
	key := "AKIA" + gen(53, upper32, 16)
	in := map[string]any{
		"content": "clone with " + pat + " then",
		"data":    []any{"aws " + key},
		key:       "as a key",
	}
	out, err := RedactValue(in, Operator)
	if err != nil {
		t.Fatal(err)
	}
	var strs []string
	outputStrings(out, &strs)
	joined := strings.Join(strs, "\n")
	for _, s := range []string{pat, key} {
		if strings.Contains(joined, s) {
			t.Errorf("%q survives: %s", s, joined)
		}
	}
	for _, m := range []string{Marker("GITHUB_FINE_GRAINED_PAT"), Marker("AWS_ACCESS_TOKEN")} {
		if !strings.Contains(joined, m) {
			t.Errorf("marker %s missing: %s", m, joined)
		}
	}
}

// negativeCorpus is ordinary text in which no credential shape may be
// found: code, prose, identifiers, hashes, encoded images, paths.
func negativeCorpus(t *testing.T) map[string]string {
	t.Helper()
	c := map[string]string{
		"go": `package main

import ("fmt"; "strings")

// skipList holds skipped entries; ghp is not a token, nor is sk-learn.
func main() {
	var AKIAFolder = "AKIA"   // a prefix alone
	ghp_count, gho_total := 3, 4
	sk := strings.Repeat("-", 80)
	fmt.Println(AKIAFolder, ghp_count, gho_total, sk, "xoxb-", "glpat-", "AIza")
	for i := 0; i < 10; i++ { if i%2 == 0 { continue } }
	_ = map[string]int{"SK": 1, "dapi": 2, "hf_hub": 3, "npm_config_cache": 4}
}`,
		"python": `import os, re
def get_secret_key(settings):
    """Return settings.SECRET_KEY or raise."""
    pattern = re.compile(r"ghp_[0-9A-Za-z]{36}")  # the shape, not a token
    api_org_name = "huggingface"
    sk_test_mode = os.environ.get("SK_TEST_MODE", "0")
    return settings.get("SECRET_KEY") or hf_hub_download(repo_id="gpt2")
class SkAntAdmin: pass
`,
		"prose": "Skipping the ask-a-question step, Akiane asked Asia about AIza-like keys; " +
			"the Slack channel #xoxo-fans and the GitLab group glpat-docs are public. " +
			"Read the sk-proj- prefix docs, see sha256~ notation, pat. on the back, SG. is Singapore.",
		"uuids":   "550e8400-e29b-41d4-a716-446655440000 6ba7b810-9dad-11d1-80b4-00c04fd430c8 f47ac10b-58cc-4372-a567-0e02b2c3d479",
		"shas":    "commit 8469858" + "22aa1945f6e14ec334e2532a8127286a4 tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904 sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"paths":   "/usr/local/go/src/net/http/server.go C:\\Users\\Ann\\AppData\\Local\\ghp_cache\\AKIA /home/ann/.config/gh/hosts.yml ./node_modules/npm_lifecycle/index.js",
		"urls":    "https://github.com/gitleaks/gitleaks/blob/master/cmd/generate/config/rules/github.go https://hooks.slack.com/services/ https://console.aws.amazon.com/iam/home#/users/AKIA",
		"sshpub":  "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ann@example",
		"css":     ".sk-spinner-wave{margin:40px auto}.ghp_hidden{display:none}",
		"numbers": "SK" + strings.Repeat("0", 32) + " dapi" + strings.Repeat("ab", 16),
		"cert":    "-----BEGIN CERTIFICATE-----\n" + pemBody(7, 20) + "-----END CERTIFICATE-----",
		"pubkey":  "-----BEGIN PUBLIC KEY-----\n" + pemBody(8, 6) + "-----END PUBLIC KEY-----",
		"image":   "data:image/png;base64," + pngBase64(t),
		"random":  base64.StdEncoding.EncodeToString([]byte(gen(9, string(allBytes()), 192<<10))),
		"randurl": base64.RawURLEncoding.EncodeToString([]byte(gen(10, string(allBytes()), 64<<10))),
	}
	// This package's own code holds every prefix and pattern.
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c["source:"+f] = string(b)
	}
	return c
}

func allBytes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// pngBase64 encodes a noisy 128×128 image, the kind of blob a tool result
// carries.
func pngBase64(t *testing.T) string {
	r := rand.New(rand.NewPCG(1, 2))
	img := image.NewNRGBA(image.Rect(0, 0, 128, 128))
	for y := range 128 {
		for x := range 128 {
			img.Set(x, y, color.NRGBA{uint8(r.IntN(256)), uint8(x * 2), uint8(y * 2), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

func TestShapesFalsePositives(t *testing.T) {
	for name, text := range negativeCorpus(t) {
		if got := shapeSecrets(text); len(got) != 0 {
			t.Errorf("%s: found %v (values %q)", name, got, values(got))
		}
	}
}

func values(ss []Secret) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Value
	}
	return out
}

func TestShapeEntropy(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want float64
	}{{"", 0}, {"aaaa", 0}, {"ab", 1}, {"abcd", 2}, {"abcdefgh", 3}, {"aabb", 1}} {
		if got := entropy(tt.in); got != tt.want {
			t.Errorf("entropy(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestShapeIndexRules pins how a rule table is applied, with rules made
// for the purpose: the first rule that matches wins, one that fails on its
// boundary or its entropy leaves the next one its chance, a group is the
// secret wherever it starts, and the pair table holds exactly the first
// two bytes of the prefixes.
func TestShapeIndexRules(t *testing.T) {
	ix := buildShapeIndex([]shapeRule{
		{id: "short-first", prefixes: []string{"zq_"}, pattern: `zq_[a-h]{8}`},
		{id: "long-second", prefixes: []string{"zq_"}, pattern: `zq_[a-h]{8}[0-9]{4}`},
		{id: "grouped", prefixes: []string{"gr"}, pattern: `(gr[a-h]{8})x`},
		{id: "entropy-first", prefixes: []string{"en"}, pattern: `(en)[a-z]{6}`},
		{id: "entropy-second", prefixes: []string{"en"}, pattern: `en[a-z]{6}`},
		{id: "windowed", prefixes: []string{"wi"}, pattern: `wi[a-h]+`, maxLen: 10},
	})
	scan := func(s string) []string {
		d := &discoverer{}
		ix.scan(d, s)
		var out []string
		for _, sec := range d.finish() {
			out = append(out, sec.Source+"="+sec.Value)
		}
		return out
	}
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"zq_abcdefgh", []string{"shape:short-first=zq_abcdefgh"}},
		{"zq_abcdefgh1234", []string{"shape:long-second=zq_abcdefgh1234"}},
		{"zq_abcdefgh12345", nil},
		{"grabcdefghx", []string{"shape:grouped=grabcdefgh"}},
		// Exactly 3 bits per character is enough.
		{"enabcdfg", []string{"shape:entropy-second=enabcdfg"}},
		{"enaaaaaaaaaa", nil},
		{"wiabcdefgh", []string{"shape:windowed=wiabcdefgh"}},
		{"wiabcdefgha", nil}, // longer than the window: its end is not seen
		{"x zq_abcdefgh, zq_hgfedcba", []string{"shape:short-first=zq_abcdefgh", "shape:short-first=zq_hgfedcba"}},
	} {
		if got := scan(tt.in); strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%q: got %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, p := range []string{"zq", "gr", "en", "wi"} {
		if !ix.hasPair(p[0], p[1]) {
			t.Errorf("pair %q missing", p)
		}
	}
	for _, p := range []string{"zr", "qz", "g\x00", "ez", "wj", "\xff\xff", "z\xc0", "zQ"} {
		if ix.hasPair(p[0], p[1]) {
			t.Errorf("pair %q present", p)
		}
	}
}

func TestShapeRulesWellFormed(t *testing.T) {
	for _, r := range shapeRules {
		for _, p := range r.prefixes {
			if len(p) < 2 {
				t.Errorf("%s: prefix %q shorter than two bytes", r.id, p)
			}
		}
	}
	for _, sm := range shapeSamples() {
		ok := false
		for _, r := range shapeRules {
			for _, p := range r.prefixes {
				ok = ok || (r.id == sm.id && strings.HasPrefix(sm.token, p))
			}
		}
		if !ok {
			t.Errorf("sample of %s starts with none of its prefixes", sm.id)
		}
	}
}

// Every shape rule's expression compiles: they are compiled lazily, on a
// rule's first candidate, so a broken one would otherwise fail only on the
// text that reaches it.
func TestEveryShapeRuleCompiles(t *testing.T) {
	for _, r := range shapeRules {
		if _, err := regexp.Compile(`^(?:` + r.pattern + `)`); err != nil {
			t.Errorf("shape rule %s: %v", r.id, err)
		}
	}
	if len(shapeRules) == 0 {
		t.Fatal("no shape rules")
	}
}
