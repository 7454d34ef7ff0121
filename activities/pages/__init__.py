"""activities/pages"""
