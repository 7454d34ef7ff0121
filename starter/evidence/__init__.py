"""starter/evidence"""
