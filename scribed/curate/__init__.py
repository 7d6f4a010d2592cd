"""Who may change the wiki and how: agents' writes through the inbox, review before promotion."""
