"""activities/engines"""
