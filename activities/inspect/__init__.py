"""activities/inspect"""
