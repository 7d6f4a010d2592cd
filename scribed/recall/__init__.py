"""What readers get back from the tiers: the spawn context, search over every tier, the report."""
