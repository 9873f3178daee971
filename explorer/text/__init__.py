"""Words shown to people: translations (i18n), the errors that carry their keys, plain and highlighted text."""
