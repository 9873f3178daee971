"""Words shown to people: translations (i18n) and the errors that carry their keys."""
