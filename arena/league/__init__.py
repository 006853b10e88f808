"""Leagues: bots submitted while play goes on, and games scheduled where they settle the ranking."""
