package redact

// shapeRules are credential formats recognised by shape alone, with no
// field name or key=value around them. They are derived from the rules of
// gitleaks v8.30.1 (github.com/zricethezav/gitleaks/v8,
// cmd/generate/config/rules), keeping only those that start with a literal
// prefix specific to one provider: a rule that needs a context word
// ("twitter", "heroku", ...) or matches bare hex or base64 is left out,
// because redaction replaces every occurrence of what it finds and a false
// positive there damages ordinary text. The ids are gitleaks' rule ids.
//
// The package is not imported: its rules package pulls in viper, zerolog,
// lipgloss, sprig and half a dozen archive formats (an 11 MB hello world),
// and validates every rule with generated samples when it is called.
//
// Deviations from gitleaks, each on purpose:
//   - lengths are widened where the provider documents variable length or
//     test and older keys are shorter (GitHub up to 255 characters, OpenAI
//     project keys and Anthropic keys without the fixed marker or suffix);
//   - every rule is case-sensitive on its prefix;
//   - a '.' inside a token never ends it, so that the full stop after a
//     token in prose is not taken as part of it (GitLab's routable suffix
//     is spelled out, PlanetScale tokens end on another character, SendGrid
//     keys have their two parts);
//   - unbounded repetitions are bounded by the rule's maxLen window;
//   - the documented AWS example key (…EXAMPLE) is not allow-listed: it is
//     harmless to redact and a convenient test value.
//
// Each pattern is matched at a position where one of its prefixes starts,
// anchored there, and the token must end at a boundary (see scanShapes).
// When a pattern has a capture group, the group is the secret.
var shapeRules = []shapeRule{
	// Model providers.
	{id: "anthropic-admin-api-key", prefixes: []string{"sk-ant-admin"}, pattern: `sk-ant-admin[0-9]{2}-[A-Za-z0-9_-]{20,250}`},
	{id: "anthropic-api-key", prefixes: []string{"sk-ant-"}, pattern: `sk-ant-[A-Za-z0-9_-]{20,250}`},
	{id: "openai-api-key", prefixes: []string{"sk-proj-", "sk-svcacct-", "sk-admin-"}, pattern: `sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,250}`},
	{id: "openai-api-key", prefixes: []string{"sk-"}, pattern: `sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}`},
	{id: "huggingface-access-token", prefixes: []string{"hf_"}, pattern: `hf_[A-Za-z]{34}`},
	{id: "huggingface-organization-api-token", prefixes: []string{"api_org_"}, pattern: `api_org_[A-Za-z]{34}`},
	{id: "perplexity-api-key", prefixes: []string{"pplx-"}, pattern: `pplx-[A-Za-z0-9]{48}`},

	// Source hosting and CI.
	{id: "github-pat", prefixes: []string{"ghp_"}, pattern: `ghp_[0-9A-Za-z]{30,251}`},
	{id: "github-oauth", prefixes: []string{"gho_"}, pattern: `gho_[0-9A-Za-z]{30,251}`},
	{id: "github-app-token", prefixes: []string{"ghu_", "ghs_"}, pattern: `gh[us]_[0-9A-Za-z]{30,251}`},
	{id: "github-refresh-token", prefixes: []string{"ghr_"}, pattern: `ghr_[0-9A-Za-z]{30,251}`},
	{id: "github-fine-grained-pat", prefixes: []string{"github_pat_"}, pattern: `github_pat_[0-9A-Za-z_]{30,244}`},
	{id: "gitlab-pat", prefixes: []string{"glpat-"}, pattern: `glpat-[0-9A-Za-z_-]{20,300}(?:\.[0-9a-z]{9})?`},
	{id: "gitlab-ptt", prefixes: []string{"glptt-"}, pattern: `glptt-[0-9a-f]{40}`},
	{id: "gitlab-deploy-token", prefixes: []string{"gldt-"}, pattern: `gldt-[0-9A-Za-z_-]{20,300}`},
	{id: "gitlab-runner-authentication-token", prefixes: []string{"glrt-"}, pattern: `glrt-[0-9A-Za-z_-]{20,300}(?:\.[0-9a-z]{9})?`},
	{id: "gitlab-rrt", prefixes: []string{"GR1348941"}, pattern: `GR1348941[0-9A-Za-z_-]{20}`},
	{id: "gitlab-cicd-job-token", prefixes: []string{"glcbt-"}, pattern: `glcbt-[0-9A-Za-z]{1,5}_[0-9A-Za-z_-]{20}`},
	{id: "gitlab-feed-token", prefixes: []string{"glft-"}, pattern: `glft-[0-9A-Za-z_-]{20}`},
	{id: "gitlab-incoming-mail-token", prefixes: []string{"glimt-"}, pattern: `glimt-[0-9A-Za-z_-]{25}`},
	{id: "gitlab-kubernetes-agent-token", prefixes: []string{"glagent-"}, pattern: `glagent-[0-9A-Za-z_-]{50}`},
	{id: "gitlab-oauth-app-secret", prefixes: []string{"gloas-"}, pattern: `gloas-[0-9A-Za-z_-]{64}`},
	{id: "gitlab-scim-token", prefixes: []string{"glsoat-"}, pattern: `glsoat-[0-9A-Za-z_-]{20}`},
	{id: "gitlab-feature-flag-client-token", prefixes: []string{"glffct-"}, pattern: `glffct-[0-9A-Za-z_-]{20}`},
	{id: "gitlab-session-cookie", prefixes: []string{"_gitlab_session="}, pattern: `_gitlab_session=([0-9a-z]{32})`},
	{id: "npm-access-token", prefixes: []string{"npm_"}, pattern: `npm_[0-9A-Za-z]{36}`},
	{id: "pypi-upload-token", prefixes: []string{"pypi-AgEIcHlwaS5vcmc"}, pattern: `pypi-AgEIcHlwaS5vcmc[0-9A-Za-z_-]{50,1000}`},
	{id: "rubygems-api-token", prefixes: []string{"rubygems_"}, pattern: `rubygems_[a-f0-9]{48}`},
	{id: "clojars-api-token", prefixes: []string{"CLOJARS_"}, pattern: `CLOJARS_[A-Za-z0-9]{60}`},
	{id: "artifactory-api-key", prefixes: []string{"AKCp"}, pattern: `AKCp[A-Za-z0-9]{69}`},
	{id: "readme-api-token", prefixes: []string{"rdme_"}, pattern: `rdme_[a-z0-9]{70}`},
	{id: "postman-api-token", prefixes: []string{"PMAK-"}, pattern: `PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}`},
	{id: "prefect-api-token", prefixes: []string{"pnu_"}, pattern: `pnu_[A-Za-z0-9]{36}`},
	{id: "pulumi-api-token", prefixes: []string{"pul-"}, pattern: `pul-[a-f0-9]{40}`},
	{id: "linear-api-key", prefixes: []string{"lin_api_"}, pattern: `lin_api_[A-Za-z0-9]{40}`},
	{id: "notion-api-token", prefixes: []string{"ntn_"}, pattern: `ntn_[0-9]{11}[A-Za-z0-9]{35}`},
	{id: "harness-api-key", prefixes: []string{"pat.", "sat."}, pattern: `(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}`},
	{id: "sentry-user-token", prefixes: []string{"sntryu_"}, pattern: `sntryu_[a-f0-9]{64}`},
	{id: "sentry-org-token", prefixes: []string{"sntrys_eyJpYXQiO"}, pattern: `sntrys_eyJpYXQiO[A-Za-z0-9+/=_]{20,1000}`},

	// Cloud.
	{id: "aws-access-token", prefixes: []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"}, pattern: `(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}`},
	{id: "aws-amazon-bedrock-api-key-long-lived", prefixes: []string{"ABSK"}, pattern: `ABSK[A-Za-z0-9+/]{109,269}={0,2}`},
	{id: "gcp-api-key", prefixes: []string{"AIza"}, pattern: `AIza[0-9A-Za-z_-]{30,60}`},
	{id: "alibaba-access-key-id", prefixes: []string{"LTAI"}, pattern: `LTAI[A-Za-z0-9]{20}`},
	{id: "digitalocean-pat", prefixes: []string{"dop_v1_"}, pattern: `dop_v1_[a-f0-9]{64}`},
	{id: "digitalocean-access-token", prefixes: []string{"doo_v1_"}, pattern: `doo_v1_[a-f0-9]{64}`},
	{id: "digitalocean-refresh-token", prefixes: []string{"dor_v1_"}, pattern: `dor_v1_[a-f0-9]{64}`},
	{id: "doppler-api-token", prefixes: []string{"dp.pt."}, pattern: `dp\.pt\.[A-Za-z0-9]{43}`},
	{id: "dynatrace-api-token", prefixes: []string{"dt0c01."}, pattern: `dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}`},
	{id: "databricks-api-token", prefixes: []string{"dapi"}, pattern: `dapi[a-f0-9]{32}(?:-[0-9])?`},
	{id: "heroku-api-key-v2", prefixes: []string{"HRKU-AA"}, pattern: `HRKU-AA[0-9A-Za-z_-]{58}`},
	{id: "flyio-access-token", prefixes: []string{"fo1_"}, pattern: `fo1_[0-9A-Za-z_-]{43}`},
	{id: "flyio-access-token", prefixes: []string{"fm1a_", "fm1r_", "fm2_"}, pattern: `fm(?:1[ar]|2)_[A-Za-z0-9+/]{100,}={0,3}`},
	{id: "vault-service-token", prefixes: []string{"hvs."}, pattern: `hvs\.[0-9A-Za-z_-]{90,120}`},
	{id: "vault-batch-token", prefixes: []string{"hvb."}, pattern: `hvb\.[0-9A-Za-z_-]{138,300}`},
	{id: "planetscale-api-token", prefixes: []string{"pscale_tkn_"}, pattern: `pscale_tkn_[0-9A-Za-z_=-][0-9A-Za-z_=.-]{30,62}[0-9A-Za-z_=-]`},
	{id: "planetscale-oauth-token", prefixes: []string{"pscale_oauth_"}, pattern: `pscale_oauth_[0-9A-Za-z_=-][0-9A-Za-z_=.-]{30,62}[0-9A-Za-z_=-]`},
	{id: "planetscale-password", prefixes: []string{"pscale_pw_"}, pattern: `pscale_pw_[0-9A-Za-z_=-][0-9A-Za-z_=.-]{30,62}[0-9A-Za-z_=-]`},
	{id: "scalingo-api-token", prefixes: []string{"tk-us-"}, pattern: `tk-us-[0-9A-Za-z_-]{48}`},
	{id: "openshift-user-token", prefixes: []string{"sha256~"}, pattern: `sha256~[0-9A-Za-z_-]{43}`},
	{id: "infracost-api-token", prefixes: []string{"ico-"}, pattern: `ico-[A-Za-z0-9]{32}`},
	{id: "grafana-cloud-api-token", prefixes: []string{"glc_"}, pattern: `glc_[A-Za-z0-9+/]{32,400}={0,3}`},
	{id: "grafana-service-account-token", prefixes: []string{"glsa_"}, pattern: `glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}`},
	{id: "grafana-api-key", prefixes: []string{"eyJrIjoi"}, pattern: `eyJrIjoi[A-Za-z0-9]{70,400}={0,3}`},
	{id: "1password-service-account-token", prefixes: []string{"ops_eyJ"}, pattern: `ops_eyJ[A-Za-z0-9+/]{250,}={0,3}`, maxLen: 8192},

	// Messaging.
	{id: "slack-bot-token", prefixes: []string{"xoxb-"}, pattern: `xoxb-[0-9]{8,14}-[0-9A-Za-z-]{10,250}`},
	{id: "slack-user-token", prefixes: []string{"xoxp-", "xoxe-"}, pattern: `xox[pe]-[0-9]{8,14}-[0-9A-Za-z-]{10,250}`},
	{id: "slack-app-token", prefixes: []string{"xapp-"}, pattern: `xapp-[0-9]-[0-9A-Za-z-]{10,250}`},
	{id: "slack-legacy-token", prefixes: []string{"xoxo-", "xoxs-"}, pattern: `xox[os]-[0-9]{1,20}-[0-9]{1,20}-[0-9]{1,20}-[0-9A-Fa-f]{1,64}`},
	{id: "slack-legacy-workspace-token", prefixes: []string{"xoxa-", "xoxr-"}, pattern: `xox[ar]-(?:[0-9]-)?[0-9A-Za-z]{8,48}`},
	{id: "slack-webhook-url", prefixes: []string{"hooks.slack.com/"}, pattern: `hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{43,56}`},
	{id: "sendgrid-api-token", prefixes: []string{"SG."}, pattern: `SG\.[A-Za-z0-9=_-]{22}\.[A-Za-z0-9=_-]{43}`},
	{id: "sendinblue-api-token", prefixes: []string{"xkeysib-"}, pattern: `xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}`},
	{id: "twilio-api-key", prefixes: []string{"SK"}, pattern: `SK[0-9a-fA-F]{32}`},

	// Payments and commerce.
	{id: "stripe-access-token", prefixes: []string{"sk_test_", "sk_live_", "sk_prod_", "rk_test_", "rk_live_", "rk_prod_"}, pattern: `[sr]k_(?:test|live|prod)_[A-Za-z0-9]{10,99}`},
	{id: "shopify-access-token", prefixes: []string{"shpat_"}, pattern: `shpat_[a-fA-F0-9]{32}`},
	{id: "shopify-custom-access-token", prefixes: []string{"shpca_"}, pattern: `shpca_[a-fA-F0-9]{32}`},
	{id: "shopify-private-app-access-token", prefixes: []string{"shppa_"}, pattern: `shppa_[a-fA-F0-9]{32}`},
	{id: "shopify-shared-secret", prefixes: []string{"shpss_"}, pattern: `shpss_[a-fA-F0-9]{32}`},
	{id: "square-access-token", prefixes: []string{"sq0atp-", "EAAA"}, pattern: `(?:EAAA|sq0atp-)[0-9A-Za-z_-]{22,60}`},
	{id: "facebook-page-access-token", prefixes: []string{"EAAM", "EAAC"}, pattern: `EAA[MC][A-Za-z0-9]{100,}`},
	{id: "shippo-api-token", prefixes: []string{"shippo_live_", "shippo_test_"}, pattern: `shippo_(?:live|test)_[a-fA-F0-9]{40}`},
	{id: "duffel-api-token", prefixes: []string{"duffel_test_", "duffel_live_"}, pattern: `duffel_(?:test|live)_[A-Za-z0-9_=-]{43}`},
	{id: "easypost-api-token", prefixes: []string{"EZAK", "EZTK"}, pattern: `EZ[AT]K[A-Za-z0-9]{54}`},
	{id: "adobe-client-secret", prefixes: []string{"p8e-"}, pattern: `p8e-[A-Za-z0-9]{32}`},
	{id: "frameio-api-token", prefixes: []string{"fio-u-"}, pattern: `fio-u-[A-Za-z0-9_=-]{64}`},

	// Keys and signed tokens.
	{id: "age-secret-key", prefixes: []string{"AGE-SECRET-KEY-1"}, pattern: `AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}`},
	{id: "private-key", prefixes: []string{"-----BEGIN"}, pattern: `-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S]{64,}?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`, maxLen: 65536},
	{id: "jwt", prefixes: []string{"eyJ"}, pattern: `eyJ[0-9A-Za-z_-]{15,}\.eyJ[0-9A-Za-z_-]{15,}\.[0-9A-Za-z_-]*={0,2}`, maxLen: 16384},
}
