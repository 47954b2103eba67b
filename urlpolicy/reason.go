package urlpolicy

// Decision reasons. The strings are part of the
// audit record and the model-visible message "URL blocked by Host policy:
// <reason>"; they never change.
const (
	// ReasonAllowed is the reason of every allowed decision.
	ReasonAllowed = "allowed"
	// ReasonInvalidURL: the URL, its host (IDNA) or its port does not parse.
	ReasonInvalidURL = "invalid_url"
	// ReasonUnsupportedScheme: the scheme is not http or https.
	ReasonUnsupportedScheme = "unsupported_scheme"
	// ReasonMissingHostname: the URL names no host.
	ReasonMissingHostname = "missing_hostname"
	// ReasonMetadataHostname: a cloud metadata service name. Never allowed.
	ReasonMetadataHostname = "metadata_hostname"
	// ReasonPrivateHostname: localhost or *.localhost, unless AllowPrivate.
	ReasonPrivateHostname = "private_hostname"
	// ReasonMetadataAddress: link-local or a cloud metadata address. Never
	// allowed.
	ReasonMetadataAddress = "metadata_address"
	// ReasonNonRoutableAddress: unspecified, multicast, broadcast, reserved,
	// documentation, benchmarking or otherwise not globally routable. Never
	// allowed.
	ReasonNonRoutableAddress = "non_routable_address"
	// ReasonPrivateAddress: loopback, RFC 1918, CGNAT or unique-local,
	// unless AllowPrivate (or AllowPrivatePrefixes) admits it.
	ReasonPrivateAddress = "private_address"
	// ReasonDNSFailure: the host name did not resolve.
	ReasonDNSFailure = "dns_failure"
	// ReasonDNSNoAddresses: the host name resolved to no address.
	ReasonDNSNoAddresses = "dns_no_addresses"
	// ReasonDNSInvalidAddress: the resolver answered something that is not
	// an IP address.
	ReasonDNSInvalidAddress = "dns_invalid_address"

	// ReasonRedirectDowngrade: a redirect from https to http. Refused by
	// CheckRedirect (not a spec reason: the original follows downgrades).
	ReasonRedirectDowngrade = "redirect_downgrade"
)
