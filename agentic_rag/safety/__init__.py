"""What keeps the app safe by construction: secrets out of logs, input guarded at the boundary, web text fenced."""
