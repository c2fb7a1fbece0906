"""The rules service: hosts one game type's tables, with Kafka as the store."""
