/**
 * The entries of a comma-separated setting (API_KEYS, ONEXPIRE_HOSTS, RATE_LIMIT_TIERS, CORS_ORIGINS...): each
 * trimmed, empty ones dropped, in order, so a problem can name an entry by its position ("entry 2 of 3").
 */
export function settingEntries(text: string | undefined): string[] {
  return (text ?? "")
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);
}
