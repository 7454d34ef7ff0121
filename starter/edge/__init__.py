"""starter/edge"""
